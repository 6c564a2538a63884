import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../../src/store/sqlite/store.ts";
import { storeTest } from "../../helpers/stores.ts";
import { tempDb } from "../../helpers/temp_db.ts";

storeTest("ensure stores the first candidate and returns it ever after, whatever later callers offer", async (store) => {
  assert.equal(await store.secrets.ensure("a", "first", 1), "first");
  assert.equal(await store.secrets.ensure("a", "second", 2), "first");
  assert.equal(await store.secrets.ensure("b", "other", 3), "other", "each name has its own secret");
});

storeTest("concurrent first calls all get the one secret that was stored", async (store) => {
  const got = await Promise.all(["x", "y", "z"].map((candidate) => store.secrets.ensure("k", candidate, 1)));
  assert.equal(new Set(got).size, 1);
});

test("a secret survives closing and reopening the database, and another connection sees it", async () => {
  const db = tempDb("fieldgate-secrets-");
  try {
    const first = openStore(db.path);
    const other = openStore(db.path);
    assert.equal(await first.secrets.ensure("k", "kept", 1), "kept");
    assert.equal(await other.secrets.ensure("k", "lost", 2), "kept");
    await first.close();
    await other.close();
    const reopened = openStore(db.path);
    assert.equal(await reopened.secrets.ensure("k", "lost", 3), "kept");
    await reopened.close();
  } finally {
    db.cleanup();
  }
});
