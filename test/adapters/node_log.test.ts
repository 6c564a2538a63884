// The Node adapter's stderr writes: one string write, and a short or failed write loses no byte.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { writeStderr } from "../../src/adapters/node_log.ts";

test("stderr text goes out as one string write when the descriptor takes it all", () => {
  const calls: [number, string][] = [];
  const queued: (string | Uint8Array)[] = [];
  writeStderr("línea\n", (fd, text) => (calls.push([fd, text]), Buffer.byteLength(text)), (rest) => queued.push(rest));
  assert.deepEqual(calls, [[2, "línea\n"]]);
  assert.deepEqual(queued, []);
});

test("a short write queues exactly the unwritten bytes, a failed one the whole text", () => {
  const queued: (string | Uint8Array)[] = [];
  // "é" is two bytes: a write that stops inside it must not drop or repeat a byte.
  writeStderr("aé\n", () => 2, (rest) => queued.push(rest));
  writeStderr("whole\n", () => {
    throw Object.assign(new Error("EAGAIN: resource temporarily unavailable"), { code: "EAGAIN" });
  }, (rest) => queued.push(rest));
  assert.equal(queued.length, 2);
  assert.deepEqual(Buffer.from(queued[0] as Uint8Array), Buffer.from("aé\n").subarray(2));
  assert.equal(queued[1], "whole\n");
});
