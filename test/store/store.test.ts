import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { assertLoopKeepsTurning } from "../helpers/event_loop.ts";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";
import { DatabaseSync } from "node:sqlite";
import { buildTestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { authCodeTokens, codeBody, issueCode, refreshBody, tokenInfo } from "../helpers/codes.ts";

const NO_RETENTION = { retentionSeconds: 0, auditRetentionSeconds: 0 };

test("purge keeps a used code while its family has a live token, so a replay after purge still revokes the family", async () => {
  const t = buildTestApp();
  const { client, issued, tokens } = await authCodeTokens(t);
  t.clock.advance(t.config.codeTtlSeconds + 60);
  // Retention 0: the code expired before the cutoff, only its family's live tokens keep it.
  const counts = await t.store.purge(t.clock.nowSeconds(), NO_RETENTION);
  assert.equal(counts.codes, 0);
  const replay = await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)));
  assert.equal(replay.status, 400);
  assert.equal((await replay.json()).error, "invalid_grant");
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401, "the family's access token is revoked");
  const refresh = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal((await refresh.json()).error, "invalid_grant", "the family's refresh token is revoked");
  const events = await t.store.audit.list({});
  assert.ok(events.some((e) => e.event === "code_reuse_detected"));
});

test("purge deletes an expired code once no token of its family is live, and an expired unused code at once", async () => {
  const t = buildTestApp();
  const { client } = await authCodeTokens(t);
  await issueCode(t, client);
  t.clock.advance(t.config.codeTtlSeconds + 60);
  assert.equal((await t.store.purge(t.clock.nowSeconds(), NO_RETENTION)).codes, 1, "only the unused code goes");
  t.clock.advance(t.config.refreshTokenTtlSeconds);
  assert.equal((await t.store.purge(t.clock.nowSeconds(), NO_RETENTION)).codes, 1, "the used code goes with its last token");
});

test("purge with the default settings keeps audit events past FIELDGATE_RETENTION until FIELDGATE_AUDIT_RETENTION", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  const day = 86_400;
  const audit = (at: number, event: string) =>
    t.store.audit.insert({ at, event, clientId: null, userId: null, ip: null, detail: null });
  await audit(now - 30 * day, "month_old");
  await audit(now - 91 * day, "quarter_old");
  // A session that expired 8 days ago: past the 7 days expired credentials are kept.
  await t.store.sessions.insert({ sessionHash: "s".repeat(64), userId: user.id, createdAt: now - 9 * day, expiresAt: now - 8 * day });
  const counts = await t.store.purge(now, t.config);
  assert.deepEqual([counts.auditEvents, counts.sessions], [1, 1]);
  assert.deepEqual((await t.store.audit.list({})).map((e) => e.event), ["month_old"]);
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
