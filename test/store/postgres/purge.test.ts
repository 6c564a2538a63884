// Purge on PostgreSQL: SQLite's rules, in batches, and one instance at a time under the purge lock.
import assert from "node:assert/strict";
import { PURGE_LOCK_KEY, purgePostgres } from "../../../src/store/postgres/purge.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { holdTransaction, insertClientRow, insertGrantRows, insertTokenRow, untilSomeoneWaitsForALock, withPgStore } from "../../helpers/pg_rows.ts";
import type { PgClient } from "../../../src/store/postgres/connect.ts";

const NOW = 100_000;
const RETENTION = { retentionSeconds: 1_000, auditRetentionSeconds: 5_000 };
const ZERO = { codes: 0, tokens: 0, sessions: 0, families: 0, auditEvents: 0, demoStates: 0, dpopProofs: 0 };

const count = async (pg: PgClient, table: string) =>
  (await pg.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n;

postgresTest("purge deletes in batches until nothing past retention is left, by SQLite's rules", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const user = await store.users.insert({ username: "ann", kind: "person", now: 1 });
    const clientId = await insertClientRow(pg);
    const old = NOW - 5_000;
    // A used code whose family still has a live refresh token stays, so a replay can still revoke the family.
    const live = await insertGrantRows(pg, { clientId, userId: user.id, now: old, codeTtl: 60, tokenTtl: 10_000 });
    // Three dead grants: code, both tokens and then the family go.
    for (let i = 0; i < 3; i++) await insertGrantRows(pg, { clientId, userId: user.id, now: old, codeTtl: 60, tokenTtl: 60 });
    // An unused code that expired: it goes at once, and its family after it.
    const unused = await insertGrantRows(pg, { clientId, userId: user.id, now: old, codeTtl: 60, tokenTtl: 60, used: false });
    await insertTokenRow(pg, { clientId, userId: user.id, familyId: null, issuedAt: old, expiresAt: NOW - 1_001 });
    await insertTokenRow(pg, { clientId, userId: user.id, familyId: null, issuedAt: old, expiresAt: NOW - 999 });
    for (let i = 0; i < 5; i++) {
      await store.sessions.insert({ sessionHash: `s${i}`.padEnd(64, "0"), userId: user.id, createdAt: old, expiresAt: NOW - 1_001 - i });
      await store.audit.insert({ at: NOW - 5_001 - i, event: "old", clientId: null, userId: null, ip: null, detail: null });
      await store.demoStates.save({ keyHash: `d${i}`, sealed: "x", expiresAt: NOW - 1_001 - i }, { keep: 100 });
    }
    await store.sessions.insert({ sessionHash: "kept".padEnd(64, "0"), userId: user.id, createdAt: old, expiresAt: NOW - 999 });
    await store.audit.insert({ at: NOW - 4_999, event: "recent", clientId: null, userId: null, ip: null, detail: null });
    await store.demoStates.save({ keyHash: "kept", sealed: "x", expiresAt: NOW - 999 }, { keep: 100 });

    assert.deepEqual(await purgePostgres(pg, NOW, RETENTION, { batchRows: 2 }), {
      codes: 4,
      tokens: 9,
      sessions: 5,
      families: 4,
      auditEvents: 5,
      demoStates: 5,
      dpopProofs: 0,
    });
    assert.deepEqual(await pg.query("SELECT id FROM authorization_codes"), [{ id: live.codeId }]);
    assert.deepEqual((await pg.query("SELECT id FROM grant_families ORDER BY id")).map((r) => r.id), [live.familyId]);
    assert.equal(await count(pg, "tokens"), 3, "the live family's two tokens and the one within retention");
    assert.deepEqual((await store.audit.list({})).map((e) => e.event), ["recent"]);
    assert.equal(await count(pg, "sessions"), 1);
    assert.equal(await store.demoStates.find("kept", 0), "x");
    assert.notEqual(unused.familyId, live.familyId);
    assert.deepEqual(await store.purge(NOW, RETENTION), ZERO, "a second run finds nothing");
  });
});

postgresTest("while one instance's purge holds the purge lock, another's returns zeros at once", async ({ url }) => {
  // Generous limits for the instance whose purge is held up on purpose.
  const patient = { lockTimeoutMs: 60_000, statementTimeoutMs: 60_000 };
  await withPgStore(url, (first, pg) =>
    withPgStore(url, async (second) => {
      await first.demoStates.save({ keyHash: "gone", sealed: "x", expiresAt: 1 }, { keep: 10 });
      await first.audit.insert({ at: 1, event: "old", clientId: null, userId: null, ip: null, detail: null });
      // Another transaction holds the first table purge deletes from, so the first purge waits inside its first
      // batch, the purge lock taken.
      const blocker = holdTransaction(pg, [["LOCK TABLE authorization_codes IN ACCESS EXCLUSIVE MODE"]]);
      await blocker.taken;
      let firstDone = false;
      const firstPurge = first.purge(NOW, RETENTION).finally(() => (firstDone = true));
      await untilSomeoneWaitsForALock(pg);
      const [lock] = await pg.query(
        "SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND granted",
        [PURGE_LOCK_KEY],
      );
      assert.deepEqual(lock, { n: 1 }, "the first purge holds the lock");
      assert.deepEqual(await second.purge(NOW, RETENTION), ZERO);
      assert.equal(firstDone, false, "the second purge did not wait for the first");
      assert.equal(await second.demoStates.find("gone", 0), "x", "and deleted nothing");
      blocker.release();
      await blocker.done;
      assert.deepEqual(await firstPurge, { ...ZERO, auditEvents: 1, demoStates: 1 });
    }), patient);
});
