// Geodesic area against closed-form spherical values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AUTHALIC_RADIUS_M, geometryAreaHa, polygonAreaM2, ringAreaM2 } from "../../src/geo/area.ts";

const RAD = Math.PI / 180;

/** Exact area of the region between two meridians and two parallels on the sphere. */
function cellAreaM2(lon1: number, lat1: number, lon2: number, lat2: number): number {
  return AUTHALIC_RADIUS_M ** 2 * Math.abs((lon2 - lon1) * RAD) * Math.abs(Math.sin(lat2 * RAD) - Math.sin(lat1 * RAD));
}

function box(lon1: number, lat1: number, lon2: number, lat2: number): number[][] {
  return [[lon1, lat1], [lon2, lat1], [lon2, lat2], [lon1, lat2], [lon1, lat1]];
}

const CELLS: [string, number, number, number, number][] = [
  ["a 1 degree cell at the equator", 0, 0, 1, 1],
  ["a field-sized cell in Flevoland", 5.7, 52.5, 5.707, 52.503],
  ["a field-sized cell in Iowa", -93.62, 42.03, -93.61, 42.035],
  ["a cell in the southern hemisphere", 150, -34, 150.01, -33.99],
  ["a cell across the antimeridian side", 179.99, 10, 180, 10.01],
];

for (const [name, lon1, lat1, lon2, lat2] of CELLS) {
  test(`ring area matches the closed form for ${name}`, () => {
    const expected = cellAreaM2(lon1, lat1, lon2, lat2);
    const actual = ringAreaM2(box(lon1, lat1, lon2, lat2));
    assert.ok(Math.abs(actual - expected) / expected < 1e-9, `${actual} vs ${expected}`);
  });
}

test("a 1 degree equatorial cell is about 12 364 km² on the authalic sphere", () => {
  const km2 = ringAreaM2(box(0, 0, 1, 1)) / 1e6;
  assert.ok(Math.abs(km2 - 12_363.7) < 1, String(km2));
});

test("a 100 m square is one hectare", () => {
  const dLat = 100 / (AUTHALIC_RADIUS_M * RAD);
  const dLon = dLat / Math.cos(52 * RAD);
  const ha = geometryAreaHa({ type: "Polygon", coordinates: [box(5, 52 - dLat / 2, 5 + dLon, 52 + dLat / 2)] });
  assert.ok(Math.abs(ha - 1) < 1e-3, String(ha));
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

test("the same cell farther from the equator is smaller, by the cosine of latitude", () => {
  const equator = ringAreaM2(box(0, -0.005, 0.01, 0.005));
  const sixty = ringAreaM2(box(0, 59.995, 0.01, 60.005));
  assert.ok(Math.abs(sixty / equator - 0.5) < 1e-4);
});

test("a ring with fewer than three distinct corners has no area", () => {
  assert.equal(ringAreaM2([[5, 52], [5.1, 52], [5, 52]]), 0);
});
