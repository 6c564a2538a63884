import assert from "node:assert/strict";
import { storeTest } from "../../helpers/stores.ts";

const row = (keyHash: string, expiresAt: number, sealed = `sealed-${keyHash}`) => ({ keyHash, sealed, expiresAt });

storeTest("find returns the saved state until it expires, and save replaces it", async (store) => {
  await store.demoStates.save(row("a", 1_000, "first"), { keep: 10 });
  await store.demoStates.save(row("a", 1_000, "second"), { keep: 10 });
  assert.equal(await store.demoStates.find("a", 999), "second");
  assert.equal(await store.demoStates.find("a", 1_000), undefined, "expired at expires_at");
  assert.equal(await store.demoStates.find("b", 0), undefined);
});

storeTest("save keeps only the latest-expiring rows besides the one it saved", async (store) => {
  for (const [key, expiresAt] of [["old", 100], ["mid", 200], ["new", 300]] as const) {
    await store.demoStates.save(row(key, expiresAt), { keep: 2 });
  }
  // One more with the earliest expiry of all: it stays (it was just saved), the oldest other row goes.
  await store.demoStates.save(row("late-comer", 50), { keep: 2 });
  const alive = await Promise.all(["old", "mid", "new", "late-comer"].map((k) => store.demoStates.find(k, 0)));
  assert.deepEqual(alive, [undefined, "sealed-mid", "sealed-new", "sealed-late-comer"]);
});

storeTest("purge deletes demo states that expired before the retention cutoff", async (store) => {
  await store.demoStates.save(row("gone", 100), { keep: 10 });
  await store.demoStates.save(row("recent", 900), { keep: 10 });
  const counts = await store.purge(1_000, { retentionSeconds: 500, auditRetentionSeconds: 500 });
  assert.equal(counts.demoStates, 1);
  assert.equal((await store.purge(2_000, { retentionSeconds: 0, auditRetentionSeconds: 0 })).demoStates, 1);
});

storeTest("delete removes the row saved under the key and no other", async (store) => {
  await store.demoStates.save(row("a", 1_000), { keep: 10 });
  await store.demoStates.save(row("b", 1_000), { keep: 10 });
  await store.demoStates.delete("a");
  await store.demoStates.delete("missing");
  assert.equal(await store.demoStates.find("a", 0), undefined);
  assert.equal(await store.demoStates.find("b", 0), "sealed-b");
});
