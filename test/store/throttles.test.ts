// The ThrottleStore contract, on SQLite and PostgreSQL: windows, limits, releases, purge (authenticateClient:
// client_authentication.test.ts).
import assert from "node:assert/strict";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { storeTest } from "../helpers/stores.ts";

const W = { windowSeconds: 60 };
const at = (now: number) => ({ now, ...W });
const a = { key: "t:a", limit: 3 };
const b = { key: "t:b", limit: 30 };

storeTest("throttle counters: failures lock a key at its limit until the window ends", async (store) => {
  assert.equal(await store.throttles.fail([a], at(1_000)), false);
  assert.equal(await store.throttles.fail([a], at(1_005)), false);
  assert.equal(await store.throttles.retryAfter([a], at(1_005)), 0);
  assert.equal(await store.throttles.fail([a], at(1_010)), true, "the failure that reaches the limit starts a lockout");
  assert.equal(await store.throttles.fail([a], at(1_010)), false, "only that one");
  assert.equal(await store.throttles.retryAfter([a], at(1_010)), 50, "the window started at the first failure");
  assert.equal(await store.throttles.retryAfter([a, b], at(1_059)), 1);
  assert.equal(await store.throttles.retryAfter([a], at(1_060)), 0, "the window has ended");
  assert.equal(await store.throttles.fail([a], at(1_060)), false, "a new window starts with one failure");
  assert.equal(await store.throttles.retryAfter([{ key: "t:none", limit: 1 }], at(0)), 0);
});

storeTest("throttle counters: each entry counts once, so a key named twice counts twice", async (store) => {
  assert.equal(await store.throttles.fail([a, a, b], at(0)), false);
  assert.equal(await store.throttles.fail([a, b], at(0)), true);
  assert.equal(await store.throttles.retryAfter([a], at(0)), 60);
  assert.equal(await store.throttles.retryAfter([b], at(0)), 0);
});

storeTest("throttle counters: a clock stepped back moves the window, so a lockout lasts one window from when it is seen", async (store) => {
  for (let i = 0; i < 3; i++) await store.throttles.fail([a], at(10_000));
  assert.equal(await store.throttles.retryAfter([a], at(10_000)), 60);
  assert.equal(await store.throttles.retryAfter([a], at(2_800)), 60, "two hours back");
  assert.equal(await store.throttles.retryAfter([a], at(2_859)), 1);
  assert.equal(await store.throttles.retryAfter([a], at(2_860)), 0);
});

storeTest("throttle counters: release forgives one failure, never below none, or resets them all", async (store) => {
  for (let i = 0; i < 3; i++) await store.throttles.fail([a], at(0));
  await store.throttles.release([{ key: a.key, forgive: true }]);
  assert.equal(await store.throttles.retryAfter([a], at(0)), 0);
  await store.throttles.release([{ key: a.key, forgive: true }, { key: a.key, forgive: true }, { key: a.key, forgive: true }]);
  await store.throttles.fail([a], at(0));
  await store.throttles.fail([a], at(0));
  assert.equal(await store.throttles.retryAfter([a], at(0)), 0, "two failures after forgiving more than there were");
  await store.throttles.fail([a], at(30));
  assert.equal(await store.throttles.retryAfter([a], at(30)), 30, "forgiving kept the window");
  await store.throttles.release([{ key: a.key, reset: true }]);
  assert.equal(await store.throttles.retryAfter([a], at(30)), 0);
  for (let i = 0; i < 3; i++) await store.throttles.fail([a], at(40));
  assert.equal(await store.throttles.retryAfter([a], at(40)), 60, "after a reset the next failure starts a new window");
  await store.throttles.release([{ key: "t:never", forgive: true, reset: true }]);
  assert.equal(await store.throttles.count("t:"), 1, "a release creates no counter");
});

storeTest("throttle counters: charge counts before the outcome unless a checked key is locked, then counts nothing", async (store) => {
  const own = { key: "t:own", limit: 2 };
  const everywhere = { key: "t:everywhere", limit: 20 };
  assert.deepEqual(await store.throttles.charge({ checked: [own], counted: [own, everywhere] }, at(0)), { wait: 0, lockout: false });
  assert.deepEqual(await store.throttles.charge({ checked: [own], counted: [own, everywhere] }, at(5)), { wait: 0, lockout: true });
  assert.deepEqual(await store.throttles.charge({ checked: [own], counted: [own, everywhere] }, at(10)), { wait: 50, lockout: false });
  // The refused attempt counted nowhere: one more failure on the shared key leaves it two short of its limit.
  for (let i = 0; i < 17; i++) await store.throttles.fail([everywhere], at(10));
  assert.equal(await store.throttles.retryAfter([everywhere], at(10)), 0);
  // A key only counted, not checked, takes failures even when locked.
  assert.deepEqual(await store.throttles.charge({ checked: [], counted: [own] }, at(10)), { wait: 0, lockout: false });
  assert.deepEqual(await store.throttles.charge({ checked: [], counted: [everywhere] }, at(10)), { wait: 0, lockout: true });
  assert.equal(await store.throttles.retryAfter([everywhere], at(10)), 50);
});

storeTest("throttle counters: a refused charge leaves no counter for the keys it named", async (store) => {
  const address = { key: "t:ip", limit: 1 };
  await store.throttles.fail([address], at(0));
  for (let i = 0; i < 20; i++) {
    const charge = await store.throttles.charge({ checked: [address, { key: `t:user-${i}`, limit: 3 }], counted: [address, { key: `t:user-${i}`, limit: 3 }] }, at(1));
    assert.equal(charge.wait, 59);
  }
  assert.equal(await store.throttles.count("t:"), 1);
});

storeTest("throttle counters: count reads one prefix, purge deletes counters whose window has ended", async (store) => {
  await store.throttles.fail([a, { key: "u:x", limit: 1 }], at(0));
  await store.throttles.fail([b], at(50));
  assert.equal(await store.throttles.count("t:"), 2);
  assert.equal(await store.throttles.count("u:"), 1);
  assert.equal(await store.throttles.purgeExpired(59), 0);
  assert.equal(await store.throttles.purgeExpired(60), 2, "a's and u:x's windows ended, b's holds it");
  assert.equal(await store.throttles.count(""), 1);
  assert.equal(await store.throttles.purgeExpired(110), 1);
  assert.equal(await store.throttles.count(""), 0);
});

storeTest("throttle counters: parallel charges on one fresh key let exactly the limit through", async (store) => {
  const fresh = { key: "t:fresh", limit: 5 };
  const charges = await Promise.all(Array.from({ length: 20 }, () => store.throttles.charge({ checked: [fresh], counted: [fresh] }, at(0))));
  assert.equal(charges.filter((c) => c.wait === 0).length, 5);
  assert.equal(charges.filter((c) => c.lockout).length, 1);
});

postgresTest("throttle counters: two instances on one database share every count, and parallel attempts across them hold to the limit", async (db) => {
  const [one, two] = [await openPostgresStore(db.url), await openPostgresStore(db.url)];
  try {
    await one.throttles.fail([a], at(0));
    await two.throttles.fail([a], at(0));
    assert.equal(await one.throttles.fail([a], at(0)), true);
    assert.equal(await two.throttles.retryAfter([a], at(0)), 60);
    // Each attempt names three keys in another order: locked in key order, no two wait on each other in a cycle.
    const keys = (prefix: string, i: number) => [0, 1, 2].map((k) => ({ key: `${prefix}${(i + k) % 3}`, limit: 4 }));
    const charged = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? one : two).throttles.charge({ checked: keys("t:c", i), counted: keys("t:c", i) }, at(0))));
    assert.equal(charged.filter((c) => c.wait === 0).length, 4);
    assert.equal(await one.throttles.count("t:"), 4, "no counter besides a's and the three named");
  } finally {
    await one.close();
    await two.close();
  }
});

storeTest("throttle counters: a key holding a NUL or a lone surrogate (whatever a form carried) is counted like any other", async (store) => {
  const odd = [{ key: "t:user:a\u0000b", limit: 1 }, { key: "t:user:\ud800", limit: 1 }];
  assert.equal(await store.throttles.fail(odd, at(0)), true);
  assert.equal(await store.throttles.retryAfter(odd.slice(0, 1), at(0)), 60);
  assert.deepEqual(await store.throttles.charge({ checked: odd.slice(1), counted: odd.slice(1) }, at(0)), { wait: 60, lockout: false });
  await store.throttles.release(odd.map(({ key }) => ({ key, reset: true })));
  assert.equal(await store.throttles.retryAfter(odd, at(0)), 0);
});

storeTest("dpop proofs: a proof is remembered once, parallel uses let exactly one through, and purge drops it after its time", async (store) => {
  assert.equal(await store.throttles.rememberProof("p1", 100), true);
  assert.equal(await store.throttles.rememberProof("p1", 100), false, "the same proof again");
  assert.equal(await store.throttles.rememberProof("p2", 100), true, "another proof");
  const parallel = await Promise.all(Array.from({ length: 8 }, () => store.throttles.rememberProof("p3", 100)));
  assert.equal(parallel.filter(Boolean).length, 1);
  const counts = await store.purge(100, { retentionSeconds: 3_600, auditRetentionSeconds: 3_600 });
  assert.equal(counts.dpopProofs, 0, "still inside its window at its last second");
  assert.equal((await store.purge(101, { retentionSeconds: 3_600, auditRetentionSeconds: 3_600 })).dpopProofs, 3,
    "no retention: a proof past its window is refused by its iat anyway");
  assert.equal(await store.throttles.rememberProof("p1", 200), true);
});
