// Background checkpoints and purges run on their timers and stop when told.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import {
  CHECKPOINT_INTERVAL_MS,
  CLOCK_JUMP_TOLERANCE_MS,
  startMaintenance,
  type Timers,
} from "../../src/server/maintenance.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import { fakeClock } from "../helpers/fake_clock.ts";

function fakeTimers() {
  const active = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  const timers: Timers = {
    setInterval: (fn, ms) => {
      active.set(next, { fn, ms });
      return next++;
    },
    clearInterval: (handle) => void active.delete(handle as number),
  };
  return { timers, active };
}

/** A few event-loop turns: enough for a batched write (committed from setImmediate) and what follows it. */
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
};

test("maintenance checkpoints every second and purges every cleanup interval", async () => {
  const store = openStore(":memory:");
  const clock = fakeClock();
  const log: string[] = [];
  // Audit events have their own, longer retention than expired credentials.
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "60", FIELDGATE_RETENTION: "0", FIELDGATE_AUDIT_RETENTION: "60" });
  await store.audit.insert({ at: clock.nowSeconds() - 120, event: "old", clientId: null, userId: null, ip: null, detail: null });
  await store.audit.insert({ at: clock.nowSeconds() - 10, event: "recent", clientId: null, userId: null, ip: null, detail: null });
  const { timers, active } = fakeTimers();
  const maintenance = startMaintenance({ store, config, clock: clock.clock, log: (event) => log.push(event) }, timers);
  assert.deepEqual([...active.values()].map((t) => t.ms), [CHECKPOINT_INTERVAL_MS, 60_000]);
  for (const { fn } of active.values()) fn();
  await flush();
  assert.deepEqual(log, ["purged"]);
  assert.deepEqual((await store.audit.list({})).map((e) => e.event), ["recent"]);
  maintenance.stop();
  assert.equal(active.size, 0);
});

test("a cleanup interval of 0 turns purging off", () => {
  const { timers, active } = fakeTimers();
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "0" });
  startMaintenance({ store: openStore(":memory:"), config, clock: Date.now, log: () => {} }, timers).stop();
  assert.equal(active.size, 0);
});

test("a failing task is logged, not thrown", async () => {
  const store = openStore(":memory:");
  await store.close();
  const log: { event: string; fields?: Record<string, unknown> }[] = [];
  const { timers, active } = fakeTimers();
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "60" });
  startMaintenance({ store, config, clock: Date.now, log: (event, fields) => log.push({ event, fields }) }, timers);
  for (const { fn } of active.values()) fn();
  await flush();
  // Both tasks fail independently; the order their failures arrive in is not part of the contract.
  assert.deepEqual(log.map((l) => [l.event, l.fields?.task]).sort(), [["maintenance_failed", "checkpoint"], ["maintenance_failed", "purge"]]);
  // The operator gets the error's kind and where it came from, as request_failed gives them.
  for (const line of log) {
    assert.match(String(line.fields?.error), /^\w*Error: /);
    assert.match(String(line.fields?.stack), /\n\s+at /);
  }
});

/** A store whose checkpoints resolve when the test says, with the outcome it gives. */
function controlledStore() {
  const waiting: ((outcome: { complete: boolean }) => void)[] = [];
  const store = openStore(":memory:");
  store.maintenance.checkpoint = () => new Promise((resolve) => waiting.push(resolve));
  return { store, waiting };
}

test("a checkpoint tick that finds the previous one still running skips", async () => {
  const { store, waiting } = controlledStore();
  const { timers, active } = fakeTimers();
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "0" });
  startMaintenance({ store, config, clock: Date.now, log: () => {} }, timers);
  const tick = [...active.values()][0]!.fn;
  tick();
  tick();
  tick();
  assert.equal(waiting.length, 1);
  waiting[0]!({ complete: true });
  await flush();
  tick();
  assert.equal(waiting.length, 2);
});

test("maintenance logs when checkpoints stop completing and when they complete again, once each", async () => {
  const { store, waiting } = controlledStore();
  const { timers, active } = fakeTimers();
  const log: string[] = [];
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "0" });
  startMaintenance({ store, config, clock: Date.now, log: (event) => log.push(event) }, timers);
  const tick = [...active.values()][0]!.fn;
  for (const complete of [true, false, false, false, true, true]) {
    tick();
    waiting.at(-1)!({ complete });
    await flush();
  }
  assert.deepEqual(log, ["wal_checkpoint_incomplete", "wal_checkpoint_complete"]);
});

test("the same failure again is not logged again; recovery is logged once with the count", async () => {
  const store = openStore(":memory:");
  let failure: string | undefined = "database or disk is full";
  store.maintenance.checkpoint = async () => {
    if (failure) throw new Error(failure);
    return { complete: true };
  };
  const log: { event: string; fields?: Record<string, unknown> }[] = [];
  const { timers, active } = fakeTimers();
  startMaintenance({ store, config: loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "0" }), clock: Date.now, log: (event, fields) => log.push({ event, fields }) }, timers);
  const tick = [...active.values()][0]!.fn;
  const ticks = async (n: number) => {
    for (let i = 0; i < n; i++) {
      tick();
      await flush();
    }
  };
  await ticks(5);
  assert.deepEqual(log.map((l) => l.event), ["maintenance_failed"]);
  failure = "disk I/O error";
  await ticks(2);
  assert.deepEqual(log.map((l) => l.event), ["maintenance_failed", "maintenance_failed"]);
  failure = undefined;
  await ticks(3);
  assert.deepEqual(log.map((l) => [l.event, l.fields?.failures]), [["maintenance_failed", undefined], ["maintenance_failed", undefined], ["maintenance_recovered", 7]]);
});

test("a purge is skipped while the wall clock has run ahead of real time, and runs again once it is back", async () => {
  const store = openStore(":memory:");
  const wall = fakeClock();
  let monotonic = 0;
  const log: { event: string; fields?: Record<string, unknown> }[] = [];
  const { timers, active } = fakeTimers();
  timers.monotonic = () => monotonic;
  // A token that expired an hour ago would go at the next purge; everything else is far from expiry.
  await store.audit.insert({ at: wall.nowSeconds(), event: "recent", clientId: null, userId: null, ip: null, detail: null });
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "60", FIELDGATE_RETENTION: String(7 * 86_400) });
  startMaintenance({ store, config, clock: wall.clock, log: (event, fields) => log.push({ event, fields }) }, timers);
  const purge = [...active.values()].find((t) => t.ms === 60_000)!.fn;
  // A minute of real time passes, and the wall clock steps 400 days ahead.
  monotonic += 60_000;
  wall.advance(60 + 400 * 86_400);
  purge();
  await flush();
  assert.deepEqual(log.map((l) => l.event), ["purge_skipped"]);
  assert.equal(log[0]!.fields?.ahead_seconds, 400 * 86_400);
  assert.equal((await store.audit.list({})).length, 1, "the audit trail survives the jump");
  // The clock is corrected; the next purge trusts it again.
  monotonic += 60_000;
  wall.advance(-400 * 86_400 + 60);
  purge();
  await flush();
  assert.deepEqual(log.map((l) => l.event), ["purge_skipped", "purged"]);
  assert.equal((await store.audit.list({})).length, 1);
});

test("the wall clock may drift from real time by less than the tolerance without stopping purges", async () => {
  const store = openStore(":memory:");
  const wall = fakeClock();
  let monotonic = 0;
  const log: string[] = [];
  const { timers, active } = fakeTimers();
  timers.monotonic = () => monotonic;
  startMaintenance({ store, config: loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "60" }), clock: wall.clock, log: (event) => log.push(event) }, timers);
  monotonic += 60_000;
  wall.advance(60 + CLOCK_JUMP_TOLERANCE_MS / 1000 - 1);
  [...active.values()].find((t) => t.ms === 60_000)!.fn();
  await flush();
  assert.deepEqual(log, ["purged"]);
});

test("a tick skipped while a failing checkpoint runs is not taken for a recovery", async () => {
  const { store, waiting } = controlledStore();
  let fail = true;
  const checkpoint = store.maintenance.checkpoint;
  store.maintenance.checkpoint = () => (fail ? Promise.reject(new Error("database or disk is full")) : checkpoint());
  const log: string[] = [];
  const { timers, active } = fakeTimers();
  startMaintenance({ store, config: loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "0" }), clock: Date.now, log: (event) => log.push(event) }, timers);
  const tick = [...active.values()][0]!.fn;
  tick();
  await flush();
  assert.deepEqual(log, ["maintenance_failed"]);
  // The next checkpoint hangs (slow I/O), still failing; a tick arrives meanwhile and finds it running.
  fail = false;
  tick();
  tick();
  assert.equal(waiting.length, 1);
  await flush();
  assert.deepEqual(log, ["maintenance_failed"], "the skipped tick said nothing");
  waiting[0]!({ complete: true });
  await flush();
  assert.deepEqual(log, ["maintenance_failed", "maintenance_recovered"]);
});
