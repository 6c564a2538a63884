// Area on the WGS84 ellipsoid against closed forms and against geographiclib.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { geometryAreaHa, polygonAreaM2, ringAreaM2, type Geometry } from "../../src/geo/area.ts";

const RAD = Math.PI / 180;
const A = 6_378_137;
const F = 1 / 298.257223563;
const E2 = F * (2 - F);
const E = Math.sqrt(E2);
const B = A * (1 - F);

/**
 * Area per radian of longitude between the equator and latitude φ on the ellipsoid, the textbook zone formula
 * b²·[sin φ / (2(1 − e² sin² φ)) + ln((1 + e sin φ) / (1 − e sin φ)) / (4e)], written independently of area.ts.
 */
function zoneM2PerRadian(lat: number): number {
  const s = Math.sin(lat * RAD);
  return B * B * (s / (2 * (1 - E2 * s * s)) + Math.log((1 + E * s) / (1 - E * s)) / (4 * E));
}

/** Exact ellipsoidal area of the region between two meridians and two parallels. */
function cellAreaM2(lon1: number, lat1: number, lon2: number, lat2: number): number {
  return Math.abs((lon2 - lon1) * RAD) * Math.abs(zoneM2PerRadian(lat2) - zoneM2PerRadian(lat1));
}

function box(lon1: number, lat1: number, lon2: number, lat2: number): number[][] {
  return [[lon1, lat1], [lon2, lat1], [lon2, lat2], [lon1, lat2], [lon1, lat1]];
}

const CELLS: [string, number, number, number, number][] = [
  ["a 1 degree cell at the equator", 0, 0, 1, 1],
  ["a field-sized cell in Flevoland", 5.7, 52.5, 5.707, 52.503],
  ["a field-sized cell in Iowa", -93.62, 42.03, -93.61, 42.035],
  ["a cell in the southern hemisphere", 150, -34, 150.01, -33.99],
  ["a cell in Finland", 25.5, 65, 25.506, 65.0025],
  ["a cell on the antimeridian side", 179.99, 10, 180, 10.01],
];

for (const [name, lon1, lat1, lon2, lat2] of CELLS) {
  test(`ring area matches the ellipsoid's closed form for ${name}`, () => {
    const expected = cellAreaM2(lon1, lat1, lon2, lat2);
    const actual = ringAreaM2(box(lon1, lat1, lon2, lat2));
    assert.ok(Math.abs(actual - expected) / expected < 1e-9, `${actual} vs ${expected}`);
  });
}

// Reference areas from geographiclib-geodesic 2.2 (Geodesic.WGS84 PolygonArea), each edge densified into 1000
// straight lon/lat steps so the edge model matches; computed once in /tmp/geo-ref/fixtures.mts. The spherical
// formula fieldgate used before was off by +0.45 % at the equator, -0.40 % at 52°N and -0.65 % at 65°N.
const rect = (lon: number, lat: number, dLon: number, dLat: number) => [box(lon, lat, lon + dLon, lat + dLat)];
const REFERENCES: [string, Geometry, number][] = [
  ["a square at the equator", { type: "Polygon", coordinates: rect(30, 0, 0.003, 0.003) }, 11.07816487],
  ["a skewed field at 52.5°N", { type: "Polygon", coordinates: [[[13.4, 52.5], [13.405, 52.5003], [13.4055, 52.503], [13.40025, 52.5027], [13.4, 52.5]]] }, 10.37140411],
  ["a rectangle at 65°N", { type: "Polygon", coordinates: rect(25.5, 65, 0.006, 0.0025) }, 7.889217341],
  ["a skewed field at 44°S", { type: "Polygon", coordinates: [[[171.5, -44], [171.504, -43.9997], [171.5044, -43.997], [171.5002, -43.9973], [171.5, -44]]] }, 9.785500875],
  ["a field with a hole at 52.5°N", { type: "Polygon", coordinates: [box(13.4, 52.5, 13.41, 52.506), box(13.402, 52.502, 13.404, 52.503).reverse()] }, 43.82666897],
  ["a 0.1° square at 52°N", { type: "Polygon", coordinates: rect(5, 52, 0.1, 0.1) }, 7633.168657],
  ["an 80 m² field at 44°S", { type: "Polygon", coordinates: [[[171.58, -43.7356], [171.5801, -43.73559], [171.58011, -43.7355], [171.58001, -43.73551], [171.58, -43.7356]]] }, 0.007966328239],
  ["a field split at the antimeridian", { type: "MultiPolygon", coordinates: [rect(179.999, -16.8, 0.001, 0.002), rect(-180, -16.8, 0.001, 0.002)] }, 4.718786540],
];

for (const [name, geometry, expectedHa] of REFERENCES) {
  test(`area of ${name} matches geographiclib to 0.001 %`, () => {
    const ha = geometryAreaHa(geometry);
    assert.ok(Math.abs(ha / expectedHa - 1) < 1e-5, `${ha} vs ${expectedHa}`);
  });
}

test("a 1 degree equatorial cell is 12 308.46 km² on the ellipsoid (geographiclib)", () => {
  const km2 = ringAreaM2(box(0, 0, 1, 1)) / 1e6;
  assert.ok(Math.abs(km2 - 12_308.46389) < 0.01, String(km2));
});

test("ring orientation does not change the area", () => {
  const ring = box(5, 52, 5.01, 52.01);
  assert.equal(ringAreaM2([...ring].reverse()), ringAreaM2(ring));
});

test("holes are subtracted from the outer ring", () => {
  const outer = box(5, 52, 5.01, 52.01);
  const hole = box(5.002, 52.002, 5.004, 52.004);
  const expected = ringAreaM2(outer) - ringAreaM2(hole);
  assert.ok(Math.abs(polygonAreaM2([outer, hole]) - expected) < 1e-6);
});

test("a MultiPolygon's area is the sum of its polygons", () => {
  const a = [box(5, 52, 5.01, 52.01)];
  const b = [box(6, 52, 6.02, 52.01)];
  const multi = geometryAreaHa({ type: "MultiPolygon", coordinates: [a, b] });
  const sum = geometryAreaHa({ type: "Polygon", coordinates: a }) + geometryAreaHa({ type: "Polygon", coordinates: b });
  assert.ok(Math.abs(multi - sum) < 1e-9);
});

test("a small cell shrinks with latitude as the ellipsoid's area element a²(1 − e²)cos φ / (1 − e² sin² φ)²", () => {
  const equator = ringAreaM2(box(0, -0.005, 0.01, 0.005));
  const sixty = ringAreaM2(box(0, 59.995, 0.01, 60.005));
  const s2 = Math.sin(60 * RAD) ** 2;
  const expected = Math.cos(60 * RAD) / (1 - E2 * s2) ** 2;
  assert.ok(Math.abs(sixty / equator - expected) < 1e-6, `${sixty / equator} vs ${expected}`);
});

test("a ring with fewer than three distinct corners has no area", () => {
  assert.equal(ringAreaM2([[5, 52], [5.1, 52], [5, 52]]), 0);
});
