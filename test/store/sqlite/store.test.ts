import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { assertLoopKeepsTurning } from "../../helpers/event_loop.ts";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../../src/store/sqlite/store.ts";
import { DatabaseSync } from "node:sqlite";
import { loadConfig } from "../../../src/config.ts";
import { TEST_ENV } from "../../helpers/test_app.ts";
import { storeTest } from "../../helpers/stores.ts";
import { seedClient, seedCode, seedGrant, seedPerson } from "../../helpers/store_seed.ts";

const NO_RETENTION = { retentionSeconds: 0, auditRetentionSeconds: 0 };

storeTest("purge keeps a used code while its family has a live token, so a replay after purge still revokes the family", async (store) => {
  const now = 10_000;
  const user = await seedPerson(store, now);
  const client = await seedClient(store, now);
  const grant = await seedGrant(store, client, user, now);
  const later = now + 700;
  // Retention 0: the code expired before the cutoff, only its family's live refresh token keeps it.
  const counts = await store.purge(later, NO_RETENTION);
  assert.equal(counts.codes, 0);
  const replay = await store.tokens.exchangeCode(grant.codeHash, client, later, () => ({ issue: { tokens: [] } }));
  assert.equal(replay.status, "reused");
  assert.equal((await store.tokens.findByHash(grant.refresh))?.revokedAt, later, "the family's refresh token is revoked");
});

storeTest("purge deletes an expired code once no token of its family is live, and an expired unused code at once", async (store) => {
  const now = 10_000;
  const user = await seedPerson(store, now);
  const client = await seedClient(store, now);
  await seedGrant(store, client, user, now, { accessTtl: 100, refreshTtl: 1_000 });
  await seedCode(store, client, user, now, 600);
  const first = await store.purge(now + 700, NO_RETENTION);
  assert.deepEqual([first.codes, first.tokens, first.families], [1, 1, 1], "the unused code and its family go, and the expired access token");
  const second = await store.purge(now + 1_001, NO_RETENTION);
  assert.deepEqual([second.codes, second.tokens, second.families], [1, 1, 1], "the used code goes with its last token, then its family");
});

storeTest("purge with the default settings keeps audit events past FIELDGATE_RETENTION until FIELDGATE_AUDIT_RETENTION", async (store) => {
  const config = loadConfig(TEST_ENV);
  const now = 1_000 * 86_400;
  const user = await seedPerson(store, now);
  const day = 86_400;
  const audit = (at: number, event: string) => store.audit.insert({ at, event, clientId: null, userId: null, ip: null, detail: null });
  await audit(now - 30 * day, "month_old");
  await audit(now - 91 * day, "quarter_old");
  // A session that expired 8 days ago: past the 7 days expired credentials are kept.
  await store.sessions.insert({ sessionHash: "s".repeat(64), userId: user.id, createdAt: now - 9 * day, expiresAt: now - 8 * day });
  await store.sessions.insert({ sessionHash: "t".repeat(64), userId: user.id, createdAt: now - 9 * day, expiresAt: now - 6 * day });
  const counts = await store.purge(now, config);
  assert.deepEqual(counts, { codes: 0, tokens: 0, sessions: 1, families: 0, auditEvents: 1, demoStates: 0, dpopProofs: 0 });
  assert.deepEqual((await store.audit.list({})).map((e) => e.event), ["month_old"]);
});

test("ping reads the file: a database overwritten with garbage is not reported healthy", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-ping-"));
  const path = join(dir, "ping.db");
  const store = openStore(path);
  try {
    assert.equal(await store.ping(), true);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      if (existsSync(file)) writeFileSync(file, new Uint8Array(statSync(file).size).fill(0x5a));
    }
    assert.equal(await store.ping(), false);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("request-path writes wait for another connection's write lock off the event loop, then commit", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-locked-store-"));
  const path = join(dir, "locked.db");
  const store = openStore(path);
  const other = new DatabaseSync(path);
  try {
    const user = await store.users.insert({ username: "ann", kind: "person", passwordHash: "h", now: 1 });
    other.exec("BEGIN IMMEDIATE");
    const writes = Promise.all([
      store.audit.insert({ at: 1, event: "sign_in_failed", clientId: null, userId: null, ip: "192.0.2.1", detail: null }),
      store.sessions.insert({ sessionHash: "s".repeat(64), userId: user.id, createdAt: 1, expiresAt: 9_999_999_999 }),
      store.users.updatePasswordHash(user.id, "h2", { replacing: "h" }),
    ]);
    await assertLoopKeepsTurning();
    other.exec("COMMIT");
    await writes;
    assert.equal((await store.audit.list({})).length, 1);
    assert.ok(await store.sessions.findActive("s".repeat(64), 2));
    assert.equal((await store.users.findById(user.id))?.passwordHash, "h2");
  } finally {
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
