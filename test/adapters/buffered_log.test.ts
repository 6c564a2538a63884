// The adapters' batched log: same line format as jsonLog, one write per wait or per 64 KiB, nothing lost on flush.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createBufferedLog, LOG_FLUSH_MS } from "../../src/adapters/buffered_log.ts";

function harness() {
  const writes: string[] = [];
  const pending: (() => void)[] = [];
  const buffered = createBufferedLog((text) => writes.push(text), (fn) => pending.push(fn));
  return { writes, pending, ...buffered, runTurn: () => pending.splice(0).forEach((fn) => fn()) };
}

test("log lines of one wait are written together, in order, as JSON lines", () => {
  const h = harness();
  h.log("request", { status: 200 });
  h.log("audit.token_issued", { client_id: "c1" });
  assert.equal(h.writes.length, 0);
  assert.equal(h.pending.length, 1);
  h.runTurn();
  assert.equal(h.writes.length, 1);
  const lines = h.writes[0]!.split("\n");
  assert.equal(lines.pop(), "");
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(parsed.map((p) => p.event), ["request", "audit.token_issued"]);
  assert.equal(parsed[0]!.status, 200);
  assert.equal(parsed[1]!.client_id, "c1");
  assert.match(String(parsed[0]!.time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

test("a line logged after a flush schedules a new write", () => {
  const h = harness();
  h.log("one");
  h.runTurn();
  h.log("two");
  assert.equal(h.pending.length, 1);
  h.runTurn();
  assert.deepEqual(h.writes.map((w) => JSON.parse(w).event), ["one", "two"]);
});

test("flush writes buffered lines at once and an empty buffer writes nothing", () => {
  const h = harness();
  h.flush();
  assert.equal(h.writes.length, 0);
  h.log("shutting_down", { signal: "SIGTERM" });
  h.flush();
  assert.equal(JSON.parse(h.writes[0]!).signal, "SIGTERM");
  h.runTurn();
  assert.equal(h.writes.length, 1);
});

test("each line carries the time it was logged, not the first line's", (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: Date.UTC(2026, 0, 1) });
  const writes: string[] = [];
  const buffered = createBufferedLog((text) => writes.push(text), () => {});
  buffered.log("a");
  t.mock.timers.tick(1500);
  buffered.log("b");
  buffered.flush();
  const times = writes.join("").trim().split("\n").map((line) => JSON.parse(line).time);
  assert.deepEqual(times, ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.500Z"]);
});

test("by default lines wait LOG_FLUSH_MS for others, then leave in one write", () => {
  const writes: string[] = [];
  const timers: { fn: () => void; ms: number | undefined }[] = [];
  const real = globalThis.setTimeout;
  // The default wait is a timer of LOG_FLUSH_MS; caught here instead of waited for, so a loaded machine cannot
  // make the test's own timing wrong.
  globalThis.setTimeout = ((fn: () => void, ms?: number) => (timers.push({ fn, ms }), 0)) as typeof setTimeout;
  try {
    const buffered = createBufferedLog((text) => writes.push(text));
    buffered.log("a");
    buffered.log("b");
  } finally {
    globalThis.setTimeout = real;
  }
  assert.deepEqual(timers.map((t) => t.ms), [LOG_FLUSH_MS]);
  assert.equal(writes.length, 0);
  timers[0]!.fn();
  assert.deepEqual(writes.map((w) => w.trim().split("\n").map((line) => JSON.parse(line).event)), [["a", "b"]]);
});

test("64 KiB of lines are written at once, and the wait still pending writes the lines after them", () => {
  const h = harness();
  const big = "x".repeat(16_000);
  for (let i = 0; i < 4; i++) h.log("big", { i, big });
  h.log("big", { i: 4, big });
  assert.equal(h.writes.length, 1);
  assert.deepEqual(h.writes[0]!.trim().split("\n").map((line) => JSON.parse(line).i), [0, 1, 2, 3, 4]);
  h.log("after");
  assert.equal(h.pending.length, 1, "no second wait is scheduled while one is pending");
  h.runTurn();
  assert.deepEqual(h.writes.slice(1).map((w) => JSON.parse(w).event), ["after"]);
});
