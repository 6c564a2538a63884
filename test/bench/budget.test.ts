// workAtRatio: where the measured ratio curve crosses a target, by linear interpolation.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { workAtRatio } from "../../bench/budget.ts";

const curve = [{ workUs: 0, ratio: 0.9 }, { workUs: 10, ratio: 0.45 }, { workUs: 20, ratio: 0.3 }, { workUs: 40, ratio: 0.2 }];

const near = (actual: number | undefined, expected: number) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`);

test("a target between two points is reached at the interpolated work", () => {
  near(workAtRatio(curve, 0.4), 10 + 10 / 3);
  near(workAtRatio(curve, 0.25), 30);
});

test("a target met exactly at a measured point is that point's work", () => {
  assert.equal(workAtRatio(curve, 0.45), 10);
});

test("a target outside the measured ratios has no answer", () => {
  assert.equal(workAtRatio(curve, 0.95), undefined);
  assert.equal(workAtRatio(curve, 0.1), undefined);
});
