// Background checkpoints and purges run on their timers and stop when told.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { CHECKPOINT_INTERVAL_MS, startMaintenance, type Timers } from "../../src/server/maintenance.ts";
import { openStore } from "../../src/store/store.ts";
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
  const config = loadConfig({ FIELDGATE_CLEANUP_INTERVAL: "60", FIELDGATE_RETENTION: "0" });
  await store.audit.insert({ at: clock.nowSeconds() - 10, event: "old", clientId: null, userId: null, ip: null, detail: null });
  const { timers, active } = fakeTimers();
  const maintenance = startMaintenance({ store, config, clock: clock.clock, log: (event) => log.push(event) }, timers);
  assert.deepEqual([...active.values()].map((t) => t.ms), [CHECKPOINT_INTERVAL_MS, 60_000]);
  for (const { fn } of active.values()) fn();
  await flush();
  assert.deepEqual(log, ["purged"]);
  assert.deepEqual(await store.audit.list({}), []);
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
  store.checkpoint = () => new Promise((resolve) => waiting.push(resolve));
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
