import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { addressBucket, createThrottle, isIpAddress, SHARED_KEY_FACTOR, UNKNOWN_ADDRESS } from "../../src/http/throttle.ts";

const key = { id: "client:a|ip:1" };
const shared = { id: "ip:1", shared: true };

test("throttle refuses a key after maxFailures inside the window and says how long to wait", async () => {
  const t = createThrottle({ maxFailures: 3, windowSeconds: 60 });
  for (let i = 0; i < 2; i++) await t.fail([key], 1000);
  assert.equal(await t.retryAfter([key], 1000), 0);
  await t.fail([key], 1010);
  assert.equal(await t.retryAfter([key], 1010), 50);
  assert.equal(await t.retryAfter([key], 1060), 0, "the window has ended");
});

test("throttle tolerates SHARED_KEY_FACTOR times more failures on a shared key", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  for (let i = 0; i < 2 * SHARED_KEY_FACTOR - 1; i++) await t.fail([shared], 0);
  assert.equal(await t.retryAfter([shared], 0), 0);
  await t.fail([shared], 0);
  assert.ok(await t.retryAfter([shared], 0) > 0);
});

test("throttle answers with the longest wait of the keys asked about", async () => {
  const t = createThrottle({ maxFailures: 1, windowSeconds: 60 });
  await t.fail([key], 0);
  await t.fail([{ id: "other" }], 30);
  assert.equal(await t.retryAfter([key, { id: "other" }], 30), 60);
});

test("fail says whether it started a lockout: true once, on the failure that reaches a key's limit", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  assert.deepEqual([await t.fail([key, shared], 0), await t.fail([key, shared], 0), await t.fail([key, shared], 0)], [false, true, false]);
  const s = createThrottle({ maxFailures: 1, windowSeconds: 60 });
  const results: boolean[] = [];
  for (let i = 0; i <= SHARED_KEY_FACTOR; i++) results.push(await s.fail([shared], 0));
  assert.deepEqual(results.map((r, i) => [i, r]).filter(([, r]) => r), [[SHARED_KEY_FACTOR - 1, true]]);
});

test("forgive takes back one failure per key and never goes below none", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  await t.fail([key], 0);
  await t.fail([key], 0);
  assert.ok(await t.retryAfter([key], 0) > 0);
  await t.forgive([key]);
  assert.equal(await t.retryAfter([key], 0), 0);
  await t.forgive([key, key, { id: "unknown" }]);
  await t.fail([key], 0);
  assert.equal(await t.retryAfter([key], 0), 0, "one failure after forgiving more than there were");
  assert.equal(await t.size(), 1);
});

test("throttle reset forgets only the keys named", async () => {
  const t = createThrottle({ maxFailures: 1, windowSeconds: 60 });
  await t.fail([key, shared], 0);
  await t.reset([key]);
  assert.equal(await t.retryAfter([key], 0), 0);
  assert.equal(await t.size(), 1);
});

test("throttle memory stays bounded under a flood of distinct keys", async () => {
  const t = createThrottle({ maxFailures: 5, windowSeconds: 60, maxKeys: 100 });
  for (let i = 0; i < 1000; i++) await t.fail([{ id: `k${i}` }], 0);
  assert.ok(await t.size() <= 100, `tracked ${await t.size()} keys`);
  await t.fail([{ id: "late" }], 120);
  assert.ok(await t.size() <= 100);
});

const IP_ROWS: [string, boolean][] = [
  ["203.0.113.5", true],
  ["0.0.0.0", true],
  ["255.255.255.255", true],
  ["256.1.1.1", false],
  ["1.2.3", false],
  ["01.2.3.4", false],
  ["1.2.3.4 ", false],
  ["1.2.3.4:80", false],
  ["::", true],
  ["::1", true],
  ["2001:db8::7", true],
  ["2001:DB8:0:0:8:800:200C:417A", true],
  ["::ffff:192.0.2.1", true],
  ["0000:0000:0000:0000:0000:ffff:255.255.255.255", true],
  ["1:2:3:4:5:6:7:8", true],
  ["1:2:3:4:5:6:7", false],
  ["1:2:3:4:5:6:7:8:9", false],
  ["1::2::3", false],
  [":::", false],
  [":1::", false],
  ["12345::", false],
  ["fe80::1%eth0", false],
  ["1.2.3.4::", false],
  ["[::1]", false],
  ["", false],
  ["unknown", false],
  ["9".repeat(100), false],
];

for (const [text, valid] of IP_ROWS) {
  test(`isIpAddress(${JSON.stringify(text.slice(0, 50))}) is ${valid}`, () => {
    assert.equal(isIpAddress(text), valid);
  });
}

const BUCKET_ROWS: [string, string][] = [
  ["203.0.113.5", "203.0.113.5"],
  ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
  ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
  ["2001:0DB8:0001:0002::1", "2001:db8:1:2::/64"],
  ["2001:db8::1", "2001:db8:0:0::/64"],
  ["2001:db8:0:0:1::", "2001:db8:0:0::/64"],
  ["::1", "0:0:0:0::/64"],
  ["::", "0:0:0:0::/64"],
  ["::ffff:192.0.2.1", "192.0.2.1"],
  ["0:0:0:0:0:FFFF:c000:0201", "192.0.2.1"],
  ["::192.0.2.1", "0:0:0:0::/64"],
  ["unknown", "(unknown)"],
  ["x".repeat(1000), "x".repeat(45)],
];

for (const [ip, bucket] of BUCKET_ROWS) {
  test(`addressBucket(${JSON.stringify(ip.slice(0, 50))}) is ${bucket.slice(0, 50)}`, () => {
    assert.equal(addressBucket(ip), bucket);
  });
}

test("addressBucket: every address of one /64 shares a bucket, a neighbouring /64 does not", () => {
  const buckets = new Set(["2001:db8:a:b::1", "2001:db8:a:b:1:2:3:4", "2001:db8:a:b:dead:beef::"].map(addressBucket));
  assert.equal(buckets.size, 1);
  assert.notEqual(addressBucket("2001:db8:a:c::1"), addressBucket("2001:db8:a:b::1"));
});

test("a clock stepped back does not stretch a lockout past one window from the moment it is seen", async () => {
  const t = createThrottle({ maxFailures: 3, windowSeconds: 60 });
  const key = [{ id: "client:a|ip:1" }];
  for (let i = 0; i < 3; i++) await t.fail(key, 10_000);
  assert.equal(await t.retryAfter(key, 10_000), 60);
  // The clock is stepped back two hours: the lockout would otherwise last until 10 060 on the new clock.
  assert.equal(await t.retryAfter(key, 2_800), 60);
  assert.equal(await t.retryAfter(key, 2_859), 1);
  assert.equal(await t.retryAfter(key, 2_860), 0);
});

test("keys built from the unknown address are never counted; a key without an address still is", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  const pooled = [{ id: `ip:${addressBucket(UNKNOWN_ADDRESS)}`, shared: true }, { id: `client:c1|ip:${addressBucket(UNKNOWN_ADDRESS)}` }];
  for (let i = 0; i < 100; i++) await t.fail(pooled, 1_000);
  assert.equal(await t.retryAfter(pooled, 1_000), 0);
  assert.equal(await t.size(), 0);
  const user = [{ id: "signin:user:alice" }, ...pooled];
  await t.fail(user, 1_000);
  await t.fail(user, 1_000);
  assert.ok(await t.retryAfter(user, 1_000) > 0);
});

/** Whether `promise` has settled once the microtasks queued so far have run. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

test("admit lets attempts through while failures and pending ones stay under the limit, then makes the next wait", async () => {
  const t = createThrottle({ maxFailures: 3, windowSeconds: 60 });
  assert.deepEqual([await t.admit([key], 0), await t.admit([key], 0)], [0, 0]);
  await t.fail([key], 0);
  const third = t.admit([key], 0);
  assert.equal(await settledNow(third), false, "one failure and two pending could already reach the limit");
  await t.settle([key]); // the failed attempt ends: one failure, one pending
  assert.equal(await third, 0);
  const fourth = t.admit([key], 0);
  assert.equal(await settledNow(fourth), false);
  await t.reset([key]); // a success forgets the failure...
  await t.settle([key]); // ...and ends: two pending left, under the limit
  assert.equal(await fourth, 0);
});

test("admit answers a waiting attempt with the lockout its predecessors' failures started", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  await t.admit([key], 100);
  await t.admit([key], 100);
  const waiting = t.admit([key], 100);
  await t.fail([key], 100);
  await t.fail([key], 100);
  await t.settle([key]);
  assert.equal(await waiting, 60);
  assert.equal(await t.admit([key], 160), 0, "the window has ended");
});

test("admit counts a shared key's pending attempts against its larger limit, and ignores uncounted keys", async () => {
  const t = createThrottle({ maxFailures: 1, windowSeconds: 60 });
  for (let i = 0; i < SHARED_KEY_FACTOR; i++) assert.equal(await t.admit([shared], 0), 0);
  assert.equal(await settledNow(t.admit([shared], 0)), false);
  const unknown = { id: `ip:${addressBucket(UNKNOWN_ADDRESS)}` };
  for (let i = 0; i < 5; i++) assert.equal(await t.admit([unknown], 0), 0, "a key every caller would share is not held");
  await t.settle([unknown]);
  assert.equal(await t.size(), 0, "pending attempts are not failures");
});

test("charge counts an attempt before its outcome unless a checked key is locked, and then counts nothing", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  const keys = { checked: [key], counted: [key, shared] };
  assert.deepEqual(await t.charge(keys, 0), { wait: 0, lockout: false });
  assert.deepEqual(await t.charge(keys, 10), { wait: 0, lockout: true });
  assert.deepEqual(await t.charge(keys, 20), { wait: 40, lockout: false });
  // The refused attempt left the shared key alone: 2 × SHARED_KEY_FACTOR - 3 more failures stay under its limit.
  for (let i = 0; i < 2 * SHARED_KEY_FACTOR - 3; i++) await t.fail([shared], 20);
  assert.equal(await t.retryAfter([shared], 20), 0);
});

test("settle with a success resets the keys it names in the same step", async () => {
  const t = createThrottle({ maxFailures: 2, windowSeconds: 60 });
  await t.fail([key, shared], 0);
  assert.equal(await t.admit([key], 0), 0);
  await t.settle([key], { reset: [key] });
  await t.fail([key], 0);
  assert.equal(await t.retryAfter([key], 0), 0, "one failure since the success");
  assert.equal(await t.size(), 2, "the shared key kept its failure");
});
