// The big-database comparison: paired runs (A B B A) when present, else the base row of the table.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { relativeChange, type ScenarioResult } from "../../bench/report.ts";

const row = (id: string, rps: number, extra: Partial<ScenarioResult> = {}) =>
  ({ id, title: id, server: "x", ratio: 0, requestsPerSecond: rps, ...extra }) as ScenarioResult;

test("paired runs compare the mean of the big runs with the mean of the empty runs around them", () => {
  const big = row("token-big", 7000, {
    target: { relativeTo: "token" },
    paired: { baseRequestsPerSecond: [8000, 6000], bigRequestsPerSecond: [6500, 7000] },
  });
  // The table's token row (9000) is ignored: it was measured a minute earlier.
  const change = relativeChange(big, { scenarios: [row("token", 9000), big] });
  assert.ok(Math.abs(change! - (6750 / 7000 - 1)) < 1e-12);
});

test("without paired runs the base row of the same report is the reference; no base, no verdict", () => {
  const big = row("count-big", 4500, { target: { relativeTo: "count" } });
  assert.ok(Math.abs(relativeChange(big, { scenarios: [row("count", 5000), big] })! + 0.1) < 1e-12);
  assert.equal(relativeChange(big, { scenarios: [big] }), undefined);
});
