// Area-weighted centroids: exact for small fields far from (0, 0), and across the antimeridian.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { geometryCentroid } from "../../src/geo/centroid.ts";

// 1e-7 degrees is about a centimetre; trig results differ in the last bits between runtimes.
const close = (a: number, b: number) => Math.abs(a - b) < 1e-7;

test("the centroid of a rectangle is its middle, whatever the ring orientation", () => {
  const ring = [[5, 52], [5.02, 52], [5.02, 52.01], [5, 52.01], [5, 52]];
  for (const r of [ring, [...ring].reverse()]) {
    const c = geometryCentroid({ type: "Polygon", coordinates: [r] });
    assert.ok(close(c.lon, 5.01) && close(c.lat, 52.005), JSON.stringify(c));
  }
});

test("an L shape's centroid lies towards its larger arm", () => {
  const ring = [[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3], [0, 0]].map(([x, y]) => [x! * 0.001, y! * 0.001]);
  const c = geometryCentroid({ type: "Polygon", coordinates: [ring] });
  // Planar centroid of this L (area 5) is (1.1, 1.1) in the unscaled units.
  assert.ok(Math.abs(c.lon - 0.0011) < 1e-7 && Math.abs(c.lat - 0.0011) < 1e-7, JSON.stringify(c));
});

test("a hole moves the centroid away from it", () => {
  const outer = [[0, 0], [0.004, 0], [0.004, 0.002], [0, 0.002], [0, 0]];
  const hole = [[0.0005, 0.0005], [0.0015, 0.0005], [0.0015, 0.0015], [0.0005, 0.0015], [0.0005, 0.0005]];
  const c = geometryCentroid({ type: "Polygon", coordinates: [outer, hole] });
  assert.ok(c.lon > 0.002);
});

test("a MultiPolygon of two equal squares has its centroid between them", () => {
  const sq = (x: number) => [[[x, 10], [x + 0.01, 10], [x + 0.01, 10.01], [x, 10.01], [x, 10]]];
  const c = geometryCentroid({ type: "MultiPolygon", coordinates: [sq(1), sq(1.02)] });
  assert.ok(close(c.lon, 1.015) && close(c.lat, 10.005), JSON.stringify(c));
});

/**
 * The exact planar centroid of a ring given with at most 9 decimals: shoelace sums in BigInt on coordinates
 * scaled to integers, relative to the first vertex. An area-weighted centroid does not change under the cos(lat)
 * scaling of longitudes (an affine map), so this is the value fieldgate's local frame must reproduce.
 */
function exactCentroid(ring: number[][]): { lon: number; lat: number } {
  const unit = 10n ** 9n;
  const big = (v: number) => BigInt(Math.round(v * 1e9));
  const [ox, oy] = [big(ring[0]![0]!), big(ring[0]![1]!)];
  const pts = ring.map(([x, y]) => [big(x!) - ox, big(y!) - oy] as const);
  let a = 0n, cx = 0n, cy = 0n;
  for (let i = 0; i < pts.length - 1; i++) {
    const [x0, y0] = pts[i]!;
    const [x1, y1] = pts[i + 1]!;
    const cross = x0 * y1 - x1 * y0;
    a += cross;
    cx += (x0 + x1) * cross;
    cy += (y0 + y1) * cross;
  }
  // centroid = sum / (3·a) in scaled units; keep 6 more digits than the 1e-9 grid before converting.
  const scaled = (s: bigint) => Number((s * 10n ** 6n) / (3n * a)) / 1e6 / Number(unit);
  return { lon: Number(ox) / 1e9 + scaled(cx), lat: Number(oy) / 1e9 + scaled(cy) };
}

/** Metres between two nearby points (equirectangular; exact enough at these distances). */
function metres(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const dx = (a.lon - b.lon) * 111_320 * Math.cos((a.lat * Math.PI) / 180);
  return Math.hypot(dx, (a.lat - b.lat) * 110_574);
}

/** Whether p is strictly inside a convex ring (every edge turns the same way around it). */
function insideConvex(p: { lon: number; lat: number }, ring: number[][]): boolean {
  const signs = ring.slice(0, -1).map((a, i) => {
    const b = ring[i + 1]!;
    return Math.sign((b[0]! - a[0]!) * (p.lat - a[1]!) - (b[1]! - a[1]!) * (p.lon - a[0]!));
  });
  return signs.every((s) => s === signs[0] && s !== 0);
}

/** A skewed convex quadrilateral of about `side` metres at lon, lat, no two sides parallel. */
function skewedField(lon: number, lat: number, side: number): number[][] {
  const dLon = Number((side / (111_320 * Math.cos((lat * Math.PI) / 180))).toFixed(9));
  const dLat = Number((side / 110_574).toFixed(9));
  const at = (fx: number, fy: number) => [Number((lon + fx * dLon).toFixed(9)), Number((lat + fy * dLat).toFixed(9))];
  return [at(0, 0), at(1, 0.1), at(1.1, 1), at(0.05, 0.9), at(0, 0)];
}

// Shoelace sums on absolute coordinates, without the local frame, put these centroids 8 to 150 m off, often outside
// fields about 10 to 30 m across.
const FAR_FROM_ORIGIN: [string, number, number][] = [
  ["New Zealand, 171.5°E 44°S", 171.5, -44],
  ["Kamchatka, 160°E 56°N", 160.1, 56.2],
  ["Iowa, 94°W 42°N", -93.6, 42],
];

for (const [place, lon, lat] of FAR_FROM_ORIGIN) {
  for (const side of [10, 20, 31.62]) {
    test(`a ${(side * side / 1e4).toFixed(2)} ha convex field in ${place} has its centroid inside, within a centimetre of exact`, () => {
      const ring = skewedField(lon, lat, side);
      for (const r of [ring, [...ring].reverse()]) {
        const c = geometryCentroid({ type: "Polygon", coordinates: [r] });
        assert.ok(metres(c, exactCentroid(ring)) < 0.01, `${metres(c, exactCentroid(ring))} m off: ${JSON.stringify(c)}`);
        assert.ok(insideConvex(c, ring), JSON.stringify(c));
      }
    });
  }
}

test("a field split at the antimeridian (RFC 7946 §3.1.9) has its centroid on it, not at longitude 0", () => {
  const east = [[179.999, -16.8], [180, -16.8], [180, -16.798], [179.999, -16.798], [179.999, -16.8]];
  const west = [[-180, -16.8], [-179.999, -16.8], [-179.999, -16.798], [-180, -16.798], [-180, -16.8]];
  const c = geometryCentroid({ type: "MultiPolygon", coordinates: [[east], [west]] });
  assert.ok(Math.abs(c.lon) > 179.99999, JSON.stringify(c));
  assert.ok(close(c.lat, -16.799), JSON.stringify(c));
});

test("a field mostly west of the antimeridian has its centroid there, in [-180, 180]", () => {
  const east = [[179.999, -16.8], [180, -16.8], [180, -16.798], [179.999, -16.798], [179.999, -16.8]];
  const west = [[-180, -16.8], [-179.997, -16.8], [-179.997, -16.798], [-180, -16.798], [-180, -16.8]];
  for (const parts of [[[east], [west]], [[west], [east]]]) {
    const c = geometryCentroid({ type: "MultiPolygon", coordinates: parts });
    // Four 0.001° columns, one east of 180 and three west: the middle is 0.001° west of it.
    assert.ok(Math.abs(c.lon - -179.999) < 1e-9, JSON.stringify(c));
  }
});

test("a sliver without area falls back to the mean of its vertices, near the field", () => {
  const ring = [[13.4, 52.5], [13.401, 52.5], [13.402, 52.5], [13.4, 52.5]];
  const c = geometryCentroid({ type: "Polygon", coordinates: [ring] });
  assert.ok(close(c.lon, 13.401) && close(c.lat, 52.5), JSON.stringify(c));
});

test("the degenerate threshold is relative: a skewed field a millimetre across still gets its area-weighted centroid", () => {
  const unit = [[0, 0], [1, 0.1], [1.1, 1], [0.05, 0.9], [0, 0]];
  const mm = 1e-8; // degrees, about a millimetre
  const ring = unit.map(([x, y]) => [13 + x! * mm, 52 + y! * mm]);
  const expected = exactCentroid(unit.map(([x, y]) => [x!, y!]));
  const c = geometryCentroid({ type: "Polygon", coordinates: [ring] });
  // The area is about 1e-16 square degrees: an absolute cut-off like 1e-18 would not do for a shape 100 times smaller.
  assert.ok(Math.abs(c.lon - (13 + expected.lon * mm)) < 1e-13 && Math.abs(c.lat - (52 + expected.lat * mm)) < 1e-13, JSON.stringify(c));
  const mean = { lon: 13 + (2.15 / 4) * mm, lat: 52 + (2 / 4) * mm };
  assert.ok(Math.abs(c.lon - mean.lon) > 1e-11 || Math.abs(c.lat - mean.lat) > 1e-11, "centroid is not the vertex mean");
});
