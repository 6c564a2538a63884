// combineRuns: a reference measured before and after its scenario is reported as one row.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { combineRuns, type LoadResult } from "../../bench/load.ts";

function run(requests: number, seconds: number, extra: Partial<LoadResult> = {}): LoadResult {
  return {
    requests, seconds, requestsPerSecond: Math.round(requests / seconds), non2xx: 0, mismatches: 0, errors: 0,
    statusCodes: { 200: requests }, exhausted: false,
    latency: { count: requests, p50: 1, p99: 2, max: 5, mean: 1.2 }, serverCpuUsPerRequest: 100, ...extra,
  };
}

test("req/s is the summed requests over the summed time, not the mean of the two rates", () => {
  const combined = combineRuns([run(30_000, 5), run(10_000, 5.5)]);
  assert.equal(combined.requests, 40_000);
  assert.equal(combined.seconds, 10.5);
  assert.equal(combined.requestsPerSecond, Math.round(40_000 / 10.5));
});

test("counts add up, CPU and percentiles are weighted by requests, the maximum is the largest", () => {
  const combined = combineRuns([
    run(3_000, 1, { non2xx: 2, errors: 1, statusCodes: { 200: 2_998, 500: 2 }, serverCpuUsPerRequest: 100, latency: { count: 3_000, p50: 1, p99: 4, max: 9, mean: 1 } }),
    run(1_000, 1, { mismatches: 3, statusCodes: { 200: 1_000 }, serverCpuUsPerRequest: 200, latency: { count: 1_000, p50: 2, p99: 8, max: 7, mean: 3 } }),
  ]);
  assert.deepEqual([combined.non2xx, combined.mismatches, combined.errors], [2, 3, 1]);
  assert.deepEqual(combined.statusCodes, { 200: 3_998, 500: 2 });
  assert.equal(combined.serverCpuUsPerRequest, 125);
  assert.deepEqual(combined.latency, { count: 4_000, p50: 1.25, p99: 5, max: 9, mean: 1.5 });
});

test("combining nothing is refused", () => {
  assert.throws(() => combineRuns([]), RangeError);
});
