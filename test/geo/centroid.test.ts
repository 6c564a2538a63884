// Area-weighted centroids.
import { test } from "node:test";
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
