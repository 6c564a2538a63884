// The Throttle over store counters: the in-memory throttle's rules, on SQLite and PostgreSQL, shared by instances.
import assert from "node:assert/strict";
import { createSharedThrottle } from "../../src/app/shared_throttle.ts";
import { addressBucket, SHARED_KEY_FACTOR, UNKNOWN_ADDRESS } from "../../src/http/throttle.ts";
import type { Store } from "../../src/store/store.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { PENDING_LEASE_SECONDS } from "../../src/store/throttles.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { storeTest } from "../helpers/stores.ts";

const key = { id: "client:a|ip:1" };
const shared = { id: "ip:1", shared: true };

const throttleOver = (store: Store, maxFailures: number, scope = "failures") =>
  createSharedThrottle(store.throttles, { scope, maxFailures, windowSeconds: 60 });

/** Whether `promise` has settled after `ms`: an attempt waiting for a place must still be waiting then. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return done;
}

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
  assert.equal(await t.admit(pooled, 1_000), 0);
  await t.settle(pooled);
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

storeTest("shared throttle: admit makes an attempt wait while failures and pending ones could reach the limit", async (store) => {
  const t = throttleOver(store, 3);
  assert.deepEqual([await t.admit([key], 0), await t.admit([key], 0)], [0, 0]);
  await t.fail([key], 0);
  const third = t.admit([key], 0);
  assert.equal(await settledWithin(third, 100), false, "one failure and two pending could already reach the limit");
  await t.settle([key]); // the failed attempt ends: one failure, one pending
  assert.equal(await third, 0);
  const fourth = t.admit([key], 0);
  assert.equal(await settledWithin(fourth, 100), false);
  await t.settle([key], { reset: [key] }); // a success forgets the failure and ends: two pending, under the limit
  assert.equal(await fourth, 0);
  await t.settle([key]);
  await t.settle([key]);
});

storeTest("shared throttle: a waiting attempt is answered with the lockout its predecessors' failures started", async (store) => {
  const t = throttleOver(store, 2);
  await t.admit([key], 100);
  await t.admit([key], 100);
  const waiting = t.admit([key], 100);
  await t.fail([key], 100);
  await t.fail([key], 100);
  await t.settle([key]);
  assert.equal(await waiting, 60);
  await t.settle([key]);
  assert.equal(await t.admit([key], 160), 0, "the window has ended");
});

storeTest("shared throttle: two instances over one store spend one budget, and one's attempts wait for the other's", async (store) => {
  const [a, b] = [throttleOver(store, 3), throttleOver(store, 3)];
  await a.fail([key], 0);
  await a.fail([key], 0);
  await b.fail([key], 0);
  assert.equal(await a.retryAfter([key], 0), 60, "b's failure locked the key on a");
  const other = { id: "client:b|ip:1" };
  for (let i = 0; i < 3; i++) assert.equal(await a.admit([other], 0), 0);
  // b learns of a's settle only by looking again: no wake-up crosses instances.
  const waiting = b.admit([other], 0);
  assert.equal(await settledWithin(waiting, 50), false);
  await a.settle([other]);
  assert.equal(await waiting, 0);
});

storeTest("shared throttle: the failure throttle and the sign-in limit keep apart counters for the same key", async (store) => {
  const failures = throttleOver(store, 1, "failures");
  const successes = throttleOver(store, 1, "sign-ins");
  await failures.fail([key], 0);
  assert.equal(await successes.retryAfter([key], 0), 0);
  assert.deepEqual([await failures.size(), await successes.size()], [1, 0]);
});

postgresTest("shared throttle: an attempt waiting on a place another instance holds, never settled, is refused for the lease", async (db) => {
  const [one, two] = [await openPostgresStore(db.url), await openPostgresStore(db.url)];
  try {
    // One instance admits and dies before settling: its place is held until the lease ends, never longer.
    assert.equal(await throttleOver(one, 1).admit([key], 0), 0);
    await one.close();
    const survivor = createSharedThrottle(two.throttles, { scope: "failures", maxFailures: 1, windowSeconds: 60, waitLimitMs: 200 });
    assert.equal(await survivor.admit([key], 0), PENDING_LEASE_SECONDS);
    assert.equal(await survivor.admit([key], PENDING_LEASE_SECONDS), 0, "the lease has ended");
  } finally {
    await two.close();
  }
});
