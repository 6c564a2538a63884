// The throttle's keys: address buckets, the keys no throttle counts, a shared key's limit (the counting: app/shared_throttle.ts).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { addressBucket, isCountedKey, isIpAddress, limitOfKey, SHARED_KEY_FACTOR, UNKNOWN_ADDRESS } from "../../src/http/throttle.ts";

test("limitOfKey: a shared key tolerates SHARED_KEY_FACTOR times the failures of a specific one", () => {
  assert.equal(limitOfKey({ id: "client:a|ip:1" }, 5), 5);
  assert.equal(limitOfKey({ id: "ip:1", shared: true }, 5), 5 * SHARED_KEY_FACTOR);
});

test("isCountedKey: keys built from the unknown address are never counted; a key without an address still is", () => {
  const bucket = addressBucket(UNKNOWN_ADDRESS);
  assert.equal(isCountedKey({ id: `ip:${bucket}`, shared: true }), false);
  assert.equal(isCountedKey({ id: `client:c1|ip:${bucket}` }), false);
  assert.equal(isCountedKey({ id: "signin:user:alice" }), true);
  assert.equal(isCountedKey({ id: "ip:203.0.113.5", shared: true }), true);
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

