// combineRuns: a reference measured before and after its scenario is reported as one row.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { combineRuns, runLoad, type LoadResult } from "../../bench/load.ts";

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

test("database CPU and round trips per request are weighted by requests, and left out when a run lacks them", () => {
  const both = combineRuns([
    run(3_000, 1, { databaseCpuUsPerRequest: 40, roundTripsPerRequest: 2 }),
    run(1_000, 1, { databaseCpuUsPerRequest: 80, roundTripsPerRequest: 3 }),
  ]);
  assert.equal(both.databaseCpuUsPerRequest, 50);
  assert.equal(both.roundTripsPerRequest, 2.25);
  const partial = combineRuns([run(3_000, 1, { roundTripsPerRequest: 2 }), run(1_000, 1)]);
  assert.equal("roundTripsPerRequest" in partial, false);
  assert.equal("databaseCpuUsPerRequest" in partial, false);
});

/** A server on 127.0.0.1 that records each request body and answers 200. */
async function recordingServer(bodies: string[]): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      bodies.push(body);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test("load over several origins deals the connections over all of them, drawing every body from one nextBody", async () => {
  const seen: string[][] = [[], []];
  const servers = await Promise.all(seen.map(recordingServer));
  let next = 0;
  // A pool of single-use bodies, as refresh tokens are: no body may reach two servers or one server twice.
  const pool = 400;
  try {
    const result = await runLoad({
      origin: servers[0]!.origin,
      method: "POST",
      path: "/",
      nextBody: () => (next < pool ? String(next++) : undefined),
    }, { connections: 3, warmupSeconds: 0, durationSeconds: 5, origins: servers.map((s) => s.origin) });
    assert.ok(seen.every((bodies) => bodies.length > 0), `per server: ${seen.map((b) => b.length).join(", ")}`);
    // A connection set up as the pool ran dry may still send its request with no body; that spends nothing.
    const drawn = seen.flat().filter((body) => body !== "");
    assert.equal(new Set(drawn).size, drawn.length, "a body was sent twice");
    assert.ok(drawn.length > 0 && result.requests <= seen.flat().length, `${result.requests} answers, ${drawn.length} drawn`);
    assert.equal(result.exhausted, true, "the pool ran dry and stopped every connection");
  } finally {
    for (const { server } of servers) server.close();
  }
});

test("combining nothing is refused", () => {
  assert.throws(() => combineRuns([]), RangeError);
});
