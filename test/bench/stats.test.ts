// Tests for the benchmark's statistics helpers (the benchmark itself never runs in the test suite).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createRecorder, percentile, ratio, summarise } from "../../bench/stats.ts";

const rows = [
  { name: "p50 of 1..100 is 50", values: Array.from({ length: 100 }, (_, i) => i + 1), p: 50, expected: 50 },
  { name: "p99 of 1..100 is 99", values: Array.from({ length: 100 }, (_, i) => i + 1), p: 99, expected: 99 },
  { name: "p100 is the maximum", values: [1, 2, 3], p: 100, expected: 3 },
  { name: "p99 of a short list is its maximum", values: [1, 2, 3, 4], p: 99, expected: 4 },
  { name: "p50 of one value is that value", values: [7.5], p: 50, expected: 7.5 },
  { name: "p1 of 1..1000 is 10", values: Array.from({ length: 1000 }, (_, i) => i + 1), p: 1, expected: 10 },
];

for (const row of rows) {
  test(`percentile: ${row.name}`, () => {
    assert.equal(percentile(row.values, row.p), row.expected);
  });
}

test("percentile of an empty list is NaN", () => {
  assert.ok(Number.isNaN(percentile([], 50)));
});

for (const p of [0, -1, 101, Number.NaN]) {
  test(`percentile rejects p = ${p}`, () => {
    assert.throws(() => percentile([1], p), RangeError);
  });
}

test("summarise sorts before taking percentiles and reports count, max and mean", () => {
  const summary = summarise([5, 1, 4, 2, 3]);
  assert.deepEqual(summary, { count: 5, p50: 3, p99: 5, max: 5, mean: 3 });
});

test("summarise compares numerically, not as strings", () => {
  assert.equal(summarise([10, 9, 100]).p50, 10);
});

test("recorder keeps every value past its initial capacity", () => {
  const recorder = createRecorder(2);
  for (let i = 0; i < 5; i++) recorder.record(i * 1.5);
  assert.equal(recorder.length, 5);
  assert.deepEqual(Array.from(recorder.values()), [0, 1.5, 3, 4.5, 6]);
});

test("ratio rounds to two decimals and is NaN without a ceiling", () => {
  assert.equal(ratio(14_000, 56_000), 0.25);
  assert.equal(ratio(1, 3), 0.33);
  assert.ok(Number.isNaN(ratio(1, 0)));
});
