// Polygon validity: every way a ring or part can be wrong is refused with its place, valid shapes pass.
// Each invalid row goes through checkValidity, then checkPartsApart, as an import would.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import type { Geometry } from "../../src/geo/area.ts";
import { GeoJsonError } from "../../src/geo/errors.ts";
import { checkPartsApart, checkValidity } from "../../src/geo/validity.ts";

/** A closed ring from corner positions (the first is repeated at the end). */
function ring(...corners: [number, number][]): number[][] {
  return [...corners, corners[0]!];
}

function box(x1: number, y1: number, x2: number, y2: number): number[][] {
  return ring([x1, y1], [x2, y1], [x2, y2], [x1, y2]);
}

const polygon = (...rings: number[][][]): Geometry => ({ type: "Polygon", coordinates: rings });
const multi = (...polygons: number[][][][]): Geometry => ({ type: "MultiPolygon", coordinates: polygons });

const VALID: [string, Geometry][] = [
  ["a square", polygon(box(13.4, 52.5, 13.41, 52.51))],
  ["a clockwise square", polygon(box(13.4, 52.5, 13.41, 52.51).reverse())],
  ["an L shape", polygon(ring([0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]))],
  ["a square with a hole", polygon(box(0, 0, 10, 10), box(2, 2, 4, 4))],
  ["a hole touching its shell at one point", polygon(box(0, 0, 10, 10), ring([0, 5], [3, 4], [3, 6]))],
  ["two holes touching at one point", polygon(box(0, 0, 10, 10), box(2, 2, 4, 4), box(4, 4, 6, 6))],
  ["repeated consecutive positions (a GPS track)", polygon([[0, 0], [0, 0], [1, 0], [1, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 0]])],
  ["two parts apart", multi([box(0, 0, 1, 1)], [box(2, 0, 3, 1)])],
  ["two parts touching at a corner", multi([box(0, 0, 1, 1)], [box(1, 1, 2, 2)])],
  ["an island inside another part's hole", multi([box(0, 0, 10, 10), box(2, 2, 8, 8)], [box(4, 4, 6, 6)])],
  ["a field split at the antimeridian", multi([box(179.999, -16.8, 180, -16.798)], [box(-180, -16.8, -179.999, -16.798)])],
  ["a 3D ring", polygon([[0, 0, 5], [1, 0, 6], [1, 1, 7], [0, 0, 5]])],
];

for (const [name, geometry] of VALID) {
  test(`checkValidity and checkPartsApart accept ${name}`, () => {
    checkValidity(geometry);
    checkPartsApart(geometry);
  });
}

const INVALID: [string, Geometry, RegExp][] = [
  ["a bow-tie", polygon(ring([13.4, 52.5], [13.402, 52.502], [13.402, 52.5], [13.4, 52.502])), /^polygon ring 0 crosses or touches itself near 13\.401,52\.501$/],
  ["a figure eight through one vertex", polygon(ring([0, 0], [2, 2], [4, 0], [4, 4], [2, 2], [0, 4])), /ring 0 crosses or touches itself near 2,2/],
  ["a vertex lying on another edge of its ring", polygon(ring([0, 0], [4, 0], [4, 4], [2, 0], [0, 4])), /ring 0 crosses or touches itself near 2,0/],
  ["a spike out and back", polygon(ring([0, 0], [2, 0], [2, 2], [3, 3], [2, 2], [0, 2])), /ring 0 turns back on itself \(a spike\) near 3,3/],
  ["a spike along an edge", polygon(ring([0, 0], [4, 0], [2, 0], [2, 2])), /spike/],
  ["a spike hidden by repeated positions", polygon([[0, 0], [2, 0], [2, 2], [3, 3], [3, 3], [2, 2], [0, 2], [0, 0]]), /spike\) near 3,3/],
  ["a hole outside its shell", polygon(box(0, 0, 1, 1), box(2, 2, 3, 3)), /^polygon ring 1 \(a hole\) is not inside ring 0 near 2,2$/],
  ["a hole around its shell (rings swapped)", polygon(box(2, 2, 3, 3), box(0, 0, 10, 10)), /ring 1 \(a hole\) is not inside ring 0/],
  ["a hole crossing its shell", polygon(box(0, 0, 10, 10), box(8, 4, 12, 6)), /^polygon rings 0 and 1 cross near 10,4$/],
  ["a hole sharing an edge with its shell", polygon(box(0, 0, 10, 10), box(0, 2, 3, 4)), /^polygon rings 0 and 1 share an edge near 0,2$/],
  ["a hole inside another hole", polygon(box(0, 0, 10, 10), box(1, 1, 9, 9), box(3, 3, 5, 5)), /ring 2 \(a hole\) is inside ring 1, another hole, near 3,3/],
  ["two holes crossing", polygon(box(0, 0, 10, 10), box(1, 1, 5, 5), box(4, 4, 8, 8)), /polygon rings 1 and 2 cross near/],
  ["a self-crossing hole", polygon(box(0, 0, 10, 10), ring([2, 2], [4, 4], [4, 2], [2, 4])), /polygon ring 1 crosses or touches itself/],
  ["two identical parts", multi([box(13.4, 52.5, 13.401, 52.501)], [box(13.4, 52.5, 13.401, 52.501)]), /^polygon 0 ring 0 and polygon 1 ring 0 share an edge near 13\.4,52\.5$/],
  ["parts sharing an edge", multi([box(0, 0, 1, 1)], [box(1, 0, 2, 1)]), /polygon 0 ring 0 and polygon 1 ring 0 share an edge/],
  ["parts crossing", multi([box(0, 0, 2, 2)], [box(1, 1, 3, 3)]), /polygon 0 ring 0 and polygon 1 ring 0 cross near/],
  ["a part inside another", multi([box(0, 0, 10, 10)], [box(2, 2, 4, 4)]), /^polygon 1 overlaps polygon 0 near 2,2: MultiPolygon parts must not overlap$/],
  ["a part around another", multi([box(2, 2, 4, 4)], [box(0, 0, 10, 10)]), /polygon 0 overlaps polygon 1 near 2,2/],
  ["a part around another's hole", multi([box(0, 0, 10, 10), box(4, 4, 6, 6)], [box(2, 2, 8, 8)]), /polygon 1 overlaps polygon 0/],
  ["a ring across the antimeridian", polygon(ring([179.999, -16.8], [-179.999, -16.8], [-179.999, -16.798], [179.999, -16.798])), /^polygon ring 0 crosses the antimeridian near 179\.999,-16\.8: split it at the antimeridian \(RFC 7946 §3\.1\.9\)$/],
  ["a MultiPolygon part across the antimeridian", multi([box(0, 0, 1, 1)], [ring([170, 0], [-170, 0], [-170, 1], [170, 1])]), /^polygon 1 ring 0 crosses the antimeridian/],
];

for (const [name, geometry, message] of INVALID) {
  test(`checkValidity or checkPartsApart refuses ${name}`, () => {
    assert.throws(() => [checkValidity, checkPartsApart].forEach((check) => check(geometry)), (error: unknown) => {
      assert.ok(error instanceof GeoJsonError);
      assert.match(error.message, message);
      return true;
    });
  });
}

test("checkValidity names the place of a crossing in a large ring, found by the sweep", () => {
  // 2 000 positions on a circle, two of them swapped: the edges around them cross.
  const points = Array.from({ length: 2000 }, (_, i) => [Math.cos((i / 2000) * 2 * Math.PI), Math.sin((i / 2000) * 2 * Math.PI)] as [number, number]);
  [points[700], points[701]] = [points[701]!, points[700]!];
  assert.throws(() => checkValidity(polygon(ring(...points))), /ring 0 crosses or touches itself near -0\.589\d*,0\.808/);
  [points[700], points[701]] = [points[701]!, points[700]!];
  checkValidity(polygon(ring(...points)));
});
