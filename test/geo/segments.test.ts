// How two segments meet: every kind of contact, from either segment's point of view.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { contactOf, onSegment, turn, type Point } from "../../src/geo/segments.ts";

const p = (x: number, y: number): Point => ({ x, y });

const CONTACTS: [string, [Point, Point, Point, Point], string, Point | undefined][] = [
  ["crossing segments", [p(0, 0), p(2, 2), p(0, 2), p(2, 0)], "cross", p(1, 1)],
  ["the first segment's start on the second", [p(1, 0), p(1, 5), p(0, 0), p(2, 0)], "touch", p(1, 0)],
  ["the first segment's end on the second", [p(1, 5), p(1, 0), p(0, 0), p(2, 0)], "touch", p(1, 0)],
  ["the second segment's start on the first", [p(0, 0), p(2, 0), p(1, 0), p(1, 5)], "touch", p(1, 0)],
  ["the second segment's end on the first", [p(0, 0), p(2, 0), p(1, 5), p(1, 0)], "touch", p(1, 0)],
  ["segments sharing an end", [p(0, 0), p(1, 1), p(1, 1), p(2, 0)], "touch", p(1, 1)],
  ["collinear segments overlapping", [p(0, 0), p(2, 0), p(1, 0), p(3, 0)], "overlap", p(1, 0)],
  ["a vertical segment inside another", [p(5, 0), p(5, 4), p(5, 3), p(5, 1)], "overlap", p(5, 1)],
  ["collinear segments meeting end to end", [p(0, 0), p(1, 0), p(1, 0), p(2, 0)], "touch", p(1, 0)],
  ["collinear segments apart", [p(0, 0), p(1, 0), p(2, 0), p(3, 0)], "none", undefined],
  ["parallel segments", [p(0, 0), p(2, 0), p(0, 1), p(2, 1)], "none", undefined],
  ["a segment ending just short of another", [p(1, 1), p(1, 1e-9), p(0, 0), p(2, 0)], "none", undefined],
  ["crossing lines whose segments do not reach", [p(0, 0), p(1, 1), p(3, 0), p(2, 1)], "none", undefined],
];

for (const [name, [p1, p2, q1, q2], kind, at] of CONTACTS) {
  test(`contactOf: ${name} is ${kind}, both ways round`, () => {
    for (const contact of [contactOf(p1, p2, q1, q2), contactOf(q1, q2, p1, p2)]) {
      assert.equal(contact.kind, kind);
      if (contact.kind !== "none") assert.deepEqual(contact.at, at);
    }
  });
}

test("turn tells left, right and straight, straight within rounding too", () => {
  assert.equal(turn(p(0, 0), p(1, 0), p(1, 1)), 1);
  assert.equal(turn(p(0, 0), p(1, 0), p(1, -1)), -1);
  assert.equal(turn(p(0, 0), p(1, 1), p(3, 3)), 0);
  // 0.1, 0.2, 0.3 are not exact in binary: the products differ in the last bit only.
  assert.equal(turn(p(0, 0), p(0.1, 0.3), p(0.2, 0.6000000000000001)), 0);
});

test("onSegment includes the ends and excludes the line beyond them", () => {
  assert.ok(onSegment(p(0, 0), p(0, 0), p(2, 2)));
  assert.ok(onSegment(p(1, 1), p(0, 0), p(2, 2)));
  assert.ok(!onSegment(p(3, 3), p(0, 0), p(2, 2)));
});
