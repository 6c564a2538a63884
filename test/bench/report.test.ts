// The target column: the big-database comparison (paired A B B A runs, else the base row) and reference servers.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { describeTarget, formatStoreTable, relativeChange, type ScenarioResult } from "../../bench/report.ts";

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

const reportOf = (scenarios: ScenarioResult[], references: ScenarioResult[]) => ({ scenarios, references });

test("a row held to a reference server is ok at or above its req/s and MISS below, with the factor", () => {
  const ref = row("ref-token", 8000);
  const above = row("token", 8800, { ratio: 0.2, target: { atLeast: "ref-token" } });
  const below = row("token", 7600, { ratio: 0.2, target: { atLeast: "ref-token" } });
  assert.equal(describeTarget(above, reportOf([above], [ref])), "ok 1.10x ref-token");
  assert.equal(describeTarget(below, reportOf([below], [ref])), "MISS 0.95x ref-token");
});

test("a reference shown beside a row gives its factor and no verdict; a reference not measured gives nothing", () => {
  const count = row("count", 9000, { ratio: 0.2, target: { ratio: 0.4, beside: "ref-bearer" } });
  assert.equal(describeTarget(count, reportOf([count], [row("ref-bearer", 30000)])), "MISS >=0.4, 0.30x ref-bearer");
  assert.equal(describeTarget(count, reportOf([count], [])), "MISS >=0.4");
});

test("peers give one factor each in the order named, and a peer not measured (no --peers) gives nothing", () => {
  const target = { atLeast: "ref-token", peers: ["peer-a", "peer-b"] };
  const token = row("token", 9000, { ratio: 0.2, target });
  const measured = [row("ref-token", 9000), row("peer-b", 18000), row("peer-a", 6000)];
  assert.equal(describeTarget(token, reportOf([token], measured)), "ok 1.00x ref-token, 1.50x peer-a, 0.50x peer-b");
  assert.equal(describeTarget(token, reportOf([token], measured.slice(0, 1))), "ok 1.00x ref-token");
});

test("the store table puts each scenario's stores together and shows no round trips for SQLite", () => {
  const result = (rps: number, extra: Record<string, number> = {}) => ({
    requests: rps, seconds: 1, requestsPerSecond: rps, non2xx: 0, mismatches: 0, errors: 0, statusCodes: {},
    exhausted: false, latency: { count: rps, p50: 1, p99: 2, max: 3, mean: 1 }, serverCpuUsPerRequest: 100, ...extra,
  });
  const table = formatStoreTable([
    { ...result(9000), title: "token", store: "sqlite", instances: 1 },
    { ...result(500), title: "count", store: "sqlite", instances: 1 },
    { ...result(4000, { roundTripsPerRequest: 2, databaseCpuUsPerRequest: 90 }), title: "token", store: "postgres", instances: 1 },
  ], ["a note"]);
  const lines = table.split("\n");
  assert.deepEqual(lines.slice(2, 5).map((l) => l.split(/\s+/).slice(0, 4)), [
    ["token", "sqlite", "1", "9000"], ["token", "postgres", "1", "4000"], ["count", "sqlite", "1", "500"],
  ]);
  assert.match(lines[2]!, /-\s+-$/, "SQLite: no database CPU, no round trips");
  assert.match(lines[3]!, /90\.0\s+2\.00$/);
  assert.equal(lines.at(-1), "note: a note");
});
