// pooledRandom: fresh, non-overlapping bytes per call, served from a pool refilled only when spent.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { pooledRandom } from "../../src/adapters/pooled_random.ts";

/** A fill that writes a running counter, so every byte handed out can be traced to its position. */
function countingFill() {
  let next = 0;
  let calls = 0;
  const fill = (bytes: Uint8Array) => {
    calls++;
    for (let i = 0; i < bytes.length; i++) bytes[i] = next++ % 251;
    return bytes;
  };
  return { fill, calls: () => calls };
}

test("consecutive calls get consecutive, non-overlapping bytes from one fill", () => {
  const f = countingFill();
  const random = pooledRandom(f.fill);
  assert.deepEqual(Array.from(random(3)), [0, 1, 2]);
  assert.deepEqual(Array.from(random(2)), [3, 4]);
  assert.equal(f.calls(), 1);
});

test("a request that does not fit the rest of the pool refills it", () => {
  const f = countingFill();
  const random = pooledRandom(f.fill);
  for (let i = 0; i < 128; i++) random(32);
  assert.equal(f.calls(), 1);
  random(32);
  assert.equal(f.calls(), 2);
});

test("returned bytes are copies that later calls do not change", () => {
  const random = pooledRandom(countingFill().fill);
  const first = random(8);
  const before = Array.from(first);
  for (let i = 0; i < 300; i++) random(32);
  assert.deepEqual(Array.from(first), before);
});

test("requests larger than the pool are filled directly", () => {
  const f = countingFill();
  const random = pooledRandom(f.fill);
  assert.equal(random(10_000).length, 10_000);
});

test("the default fill draws from crypto.getRandomValues", () => {
  const random = pooledRandom();
  const a = random(32);
  const b = random(32);
  assert.equal(a.length, 32);
  assert.notDeepEqual(a, b);
});

test("the pool keeps no copy of the bytes it handed out", () => {
  let pool: Uint8Array | undefined;
  const random = pooledRandom((bytes) => {
    pool = bytes;
    return bytes.fill(7);
  });
  assert.deepEqual(Array.from(random(16)), new Array(16).fill(7));
  assert.deepEqual(Array.from(pool!.subarray(0, 16)), new Array(16).fill(0), "spent bytes are zeroed");
  assert.equal(pool![16], 7, "the rest is still unspent");
});
