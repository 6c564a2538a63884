// The Throttle over store counters: the throttle's rules (limits, shared and uncounted keys), on SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { createSharedThrottle } from "../../src/app/shared_throttle.ts";
import { addressBucket, SHARED_KEY_FACTOR, UNKNOWN_ADDRESS } from "../../src/http/throttle.ts";
import type { Store } from "../../src/store/contract.ts";
import { storeTest } from "../helpers/stores.ts";
import { robotClient, rowsTest } from "../helpers/store_rows.ts";

const key = { id: "client:a|ip:1" };
const shared = { id: "ip:1", shared: true };

const throttleOver = (store: Store, maxFailures: number, scope = "failures") =>
  createSharedThrottle(store.throttles, { scope, maxFailures, windowSeconds: 60 });

storeTest("shared throttle refuses a key after maxFailures in the window, a shared key after SHARED_KEY_FACTOR times more", async (store) => {
  const t = throttleOver(store, 2);
  await t.fail([key], 1_000);
  assert.equal(await t.fail([key], 1_010), true);
  assert.equal(await t.retryAfter([key], 1_010), 50);
  assert.equal(await t.retryAfter([key], 1_060), 0, "the window has ended");
  for (let i = 0; i < 2 * SHARED_KEY_FACTOR - 1; i++) assert.equal(await t.fail([shared], 0), false);
  assert.equal(await t.retryAfter([shared], 0), 0);
  assert.equal(await t.fail([shared], 0), true);
  assert.equal(await t.retryAfter([shared, key], 0), 60);
});

storeTest("shared throttle: forgive takes one failure back, reset forgets a key's failures and no other's", async (store) => {
  const t = throttleOver(store, 2);
  await t.fail([key, shared], 0);
  await t.fail([key], 0);
  await t.forgive([key]);
  assert.equal(await t.retryAfter([key], 0), 0);
  await t.fail([key], 0);
  await t.reset([key]);
  assert.equal(await t.retryAfter([key], 0), 0);
  await t.fail([key], 0);
  assert.equal(await t.retryAfter([key], 0), 0, "one failure after the reset");
  assert.equal(await t.size(), 2);
});

storeTest("shared throttle: a clock stepped back does not stretch a lockout past one window from when it is seen", async (store) => {
  const t = throttleOver(store, 3);
  for (let i = 0; i < 3; i++) await t.fail([key], 10_000);
  assert.equal(await t.retryAfter([key], 2_800), 60);
  assert.equal(await t.retryAfter([key], 2_860), 0);
});

storeTest("shared throttle: keys built from the unknown address are never counted and leave no row", async (store) => {
  const t = throttleOver(store, 2);
  const pooled = [{ id: `ip:${addressBucket(UNKNOWN_ADDRESS)}`, shared: true }, { id: `client:c1|ip:${addressBucket(UNKNOWN_ADDRESS)}` }];
  for (let i = 0; i < 30; i++) await t.fail(pooled, 1_000);
  assert.deepEqual(await t.charge({ checked: pooled, counted: pooled }, 1_000), { wait: 0, lockout: false });
  assert.equal(await t.retryAfter(pooled, 1_000), 0);
  assert.equal(await store.throttles.count(""), 0);
});

storeTest("shared throttle: charge checks and counts in one step, and counts nothing when refused", async (store) => {
  const t = throttleOver(store, 2);
  const keys = { checked: [key], counted: [key, shared] };
  const charges = await Promise.all(Array.from({ length: 10 }, () => t.charge(keys, 0)));
  assert.equal(charges.filter((c) => c.wait === 0).length, 2);
  assert.equal(charges.filter((c) => c.lockout).length, 1);
  // The shared key took the two counted attempts only: 2 × SHARED_KEY_FACTOR - 3 more failures stay under its limit.
  for (let i = 0; i < 2 * SHARED_KEY_FACTOR - 3; i++) await t.fail([shared], 0);
  assert.equal(await t.retryAfter([shared], 0), 0);
});

storeTest("shared throttle: the failure throttle and the sign-in limit keep apart counters for the same key", async (store) => {
  const failures = throttleOver(store, 1, "failures");
  const successes = throttleOver(store, 1, "sign-ins");
  await failures.fail([key], 0);
  assert.equal(await successes.retryAfter([key], 0), 0);
  assert.deepEqual([await failures.size(), await successes.size()], [1, 0]);
});

rowsTest("shared throttle: client authentication counts under the throttle's scope and limits, the unknown address nowhere", async (store, rows) => {
  await robotClient(store, rows);
  const t = throttleOver(store, 2);
  const from = (ip: string) => ({ registered: { id: `client:robot|ip:${addressBucket(ip)}` }, unknown: { id: `ip:${addressBucket(ip)}`, shared: true } });
  const wrong = (ip: string) => t.authenticateClient({ clientId: "robot", digest: "h-wrong", keys: from(ip) }, 0);
  const lockouts = [];
  for (let i = 0; i < 2; i++) {
    const check = await wrong("192.0.2.1");
    assert.equal(check.outcome, "failed");
    lockouts.push(check.outcome === "failed" && check.lockout);
  }
  assert.deepEqual(lockouts, [false, true], "maxFailures of the registered key");
  assert.equal((await wrong("192.0.2.1")).outcome, "refused");
  assert.equal(await store.throttles.count("failures:client:robot|"), 1);
  assert.equal(await store.throttles.count("failures:ip:"), 1);
  for (let i = 0; i < 5; i++) assert.equal((await wrong(UNKNOWN_ADDRESS)).outcome, "failed", "never refused");
  assert.equal(await store.throttles.count(""), 2, "nothing counted for the unknown address");
});
