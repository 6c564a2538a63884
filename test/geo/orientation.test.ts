// Rings are stored in RFC 7946 order: exterior counterclockwise, holes clockwise, positions otherwise untouched.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { rewindGeometry } from "../../src/geo/orientation.ts";

const ccw = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]];
const cw = [...ccw].reverse();
const holeCw = [[0.2, 0.2], [0.2, 0.4], [0.4, 0.4], [0.4, 0.2], [0.2, 0.2]];
const holeCcw = [...holeCw].reverse();

test("a counterclockwise exterior with a clockwise hole is kept as it is", () => {
  const geometry = { type: "Polygon" as const, coordinates: [ccw, holeCw] };
  assert.deepEqual(rewindGeometry(geometry), geometry);
});

test("a clockwise exterior and a counterclockwise hole are both reversed", () => {
  assert.deepEqual(rewindGeometry({ type: "Polygon", coordinates: [cw, holeCcw] }), { type: "Polygon", coordinates: [ccw, holeCw] });
});

test("each MultiPolygon part is rewound on its own", () => {
  const shifted = (ring: number[][]) => ring.map(([x, y]) => [x! + 5, y!]);
  const result = rewindGeometry({ type: "MultiPolygon", coordinates: [[ccw], [shifted(cw), shifted(holeCcw)]] });
  assert.deepEqual(result, { type: "MultiPolygon", coordinates: [[ccw], [shifted(ccw), shifted(holeCw)]] });
});

test("reversing keeps repeated positions and altitudes", () => {
  const ring = [[0, 0, 3], [0, 1, 4], [0, 1, 4], [1, 1, 5], [1, 0, 6], [0, 0, 3]];
  const result = rewindGeometry({ type: "Polygon", coordinates: [ring] });
  assert.deepEqual(result.coordinates[0], [...ring].reverse());
});

test("a small clockwise field far from the origin is still recognised as clockwise", () => {
  const ring = [[171.5, -44], [171.5, -43.9999], [171.5001, -43.9999], [171.5001, -44], [171.5, -44]];
  assert.deepEqual(rewindGeometry({ type: "Polygon", coordinates: [ring] }).coordinates[0], [...ring].reverse());
});

test("a part split at the antimeridian winds the same way on both sides", () => {
  const east = [[179.999, 0], [180, 0], [180, 0.001], [179.999, 0.001], [179.999, 0]];
  const west = [[-180, 0], [-179.999, 0], [-179.999, 0.001], [-180, 0.001], [-180, 0]];
  const geometry = { type: "MultiPolygon" as const, coordinates: [[east], [west]] };
  assert.deepEqual(rewindGeometry(geometry), geometry);
});
