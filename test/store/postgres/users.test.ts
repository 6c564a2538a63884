// Users on PostgreSQL: account changes reach the token tables, and hold the user row against requests in flight.
import assert from "node:assert/strict";
import { REVOKE_USER_TOKENS } from "../../../src/store/postgres/users.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import {
  holdTransaction,
  insertClientRow,
  insertGrantRows,
  insertTokenRow,
  untilSomeoneWaitsForALock,
  withPgStore,
} from "../../helpers/pg_rows.ts";

const NOW = 10_000;

postgresTest("replacePassword and setDisabled with revokeTokensAt revoke the user's families, live tokens and consents", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const ann = await store.users.insert({ username: "ann", kind: "person", passwordHash: "h1", now: 1 });
    const bob = await store.users.insert({ username: "bob", kind: "person", passwordHash: "h1", now: 1 });
    const clientId = await insertClientRow(pg);
    const annGrant = await insertGrantRows(pg, { clientId, userId: ann.id, now: NOW });
    const expired = await insertTokenRow(pg, { clientId, userId: ann.id, familyId: annGrant.familyId, issuedAt: 1, expiresAt: 2 });
    const bobGrant = await insertGrantRows(pg, { clientId, userId: bob.id, now: NOW });
    await store.consents.grant(ann.id, clientId, { scope: "fields:read", now: NOW });
    await store.consents.grant(bob.id, clientId, { scope: "fields:read", now: NOW });
    await store.sessions.insert({ sessionHash: "a".repeat(64), userId: ann.id, createdAt: NOW, expiresAt: NOW + 100 });

    assert.deepEqual(await store.users.replacePassword(ann.id, "h2", { revokeTokensAt: NOW + 1 }), { sessionsEnded: 1, tokensRevoked: 2 });
    const tokens = async (familyId: string) =>
      (await pg.query("SELECT id, revoked_at FROM tokens WHERE family_id = $1 ORDER BY id", [familyId]))
        .map((row) => [row.id, row.revoked_at]);
    assert.deepEqual(await tokens(annGrant.familyId), [...annGrant.tokenIds.map((id) => [id, NOW + 1]), [expired, null]]);
    assert.deepEqual(await tokens(bobGrant.familyId), bobGrant.tokenIds.map((id) => [id, null]));
    assert.deepEqual(
      await pg.query("SELECT user_id, revoked_at, revoked_reason FROM grant_families ORDER BY user_id"),
      [{ user_id: ann.id, revoked_at: NOW + 1, revoked_reason: "password_changed" }, { user_id: bob.id, revoked_at: null, revoked_reason: null }],
    );
    assert.deepEqual((await pg.query("SELECT user_id FROM consents")).map((row) => row.user_id), [bob.id]);

    assert.deepEqual(await store.users.setDisabled(bob.id, true, { revokeTokensAt: NOW + 2 }), { sessionsEnded: 0, tokensRevoked: 2 });
    assert.deepEqual(await tokens(bobGrant.familyId), bobGrant.tokenIds.map((id) => [id, NOW + 2]));
    assert.deepEqual(
      await pg.query("SELECT revoked_reason FROM grant_families WHERE user_id = $1", [bob.id]),
      [{ revoked_reason: "user_disabled" }],
    );
    assert.deepEqual(await pg.query("SELECT user_id FROM consents"), []);
  });
});

postgresTest("erase deletes the user's families, codes and tokens, machine tokens included, and counts the live ones", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const ann = await store.users.insertMember({ username: "ann", kind: "person", passwordHash: "h", now: 1 }, "acme");
    const bob = await store.users.insert({ username: "bob", kind: "person", passwordHash: "h", now: 1 });
    const clientId = await insertClientRow(pg);
    await insertGrantRows(pg, { clientId, userId: ann.id, now: NOW });
    await insertGrantRows(pg, { clientId, userId: ann.id, now: 1, tokenTtl: 10, used: false });
    await insertTokenRow(pg, { clientId, userId: ann.id, familyId: null, issuedAt: NOW, expiresAt: NOW + 10 });
    const bobGrant = await insertGrantRows(pg, { clientId, userId: bob.id, now: NOW });
    await store.consents.grant(ann.id, clientId, { scope: "fields:read", now: NOW });

    const outcome = await store.users.erase(ann.id, NOW);
    assert.deepEqual(outcome, { status: "erased", tokensRevoked: 3, consents: 1, sessionsEnded: 0, memberships: 1, auditEventsAnonymized: 0 });
    for (const table of ["tokens", "authorization_codes", "grant_families"]) {
      assert.deepEqual((await pg.query(`SELECT DISTINCT user_id FROM ${table}`)).map((row) => row.user_id), [bob.id], table);
    }
    assert.equal((await pg.query("SELECT COUNT(*) AS n FROM tokens"))[0]!.n, bobGrant.tokenIds.length);
  });
});

postgresTest("a sign-in that meets a password change in flight waits for it, then starts no session", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const ann = await store.users.insert({ username: "ann", kind: "person", passwordHash: "old", now: 1 });
    // The password change has updated the row (and will end the sessions) but not committed yet.
    const change = holdTransaction(pg, [["UPDATE users SET password_hash = 'new' WHERE id = $1", [ann.id]]]);
    await change.taken;
    const session = { sessionHash: "s".repeat(64), userId: ann.id, createdAt: NOW, expiresAt: NOW + 100 };
    const signIn = store.sessions.replace(undefined, session, { passwordHash: "old", maxSessions: 10 });
    await untilSomeoneWaitsForALock(pg);
    change.release();
    await change.done;
    assert.equal(await signIn, false);
    assert.equal(await store.sessions.findActive("s".repeat(64), NOW), undefined);
  });
});

postgresTest("erase that meets a client being registered for the user waits for it, then refuses", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const robot = await store.users.insert({ username: "robot", kind: "integration", now: 1 });
    const registration = holdTransaction(pg, [[
      `INSERT INTO clients (client_id, secret_hash, name, grant_type, scope, integration_user_id, created_at)
      VALUES ('machine', 'x', 'Sync', 'client_credentials', 'fields:read', $1, 1)`,
      [robot.id],
    ]]);
    await registration.taken;
    const erased = store.users.erase(robot.id, NOW);
    await untilSomeoneWaitsForALock(pg);
    registration.release();
    await registration.done;
    assert.deepEqual(await erased, { status: "client_integration_user", clientId: "machine" });
    assert.equal((await store.users.findById(robot.id))?.username, "robot");
  });
});

postgresTest("revoking a user's tokens (disabled, password changed) reads tokens_by_user, not the whole table", async ({ url }) => {
  await withPgStore(url, async (_store, pg) => {
    // 100 users with 20 live tokens each, analyzed: every row passes the other conditions, so only an index on
    // user_id narrows the search, and without one the planner scans.
    await pg.query("INSERT INTO users (username, kind, created_at) SELECT 'u' || n, 'person', 1 FROM generate_series(1, 100) n");
    const clientId = await insertClientRow(pg);
    await pg.query(`INSERT INTO tokens (token_hash, kind, grant_type, client_id, user_id, scope, issued_at, expires_at)
      SELECT 't' || u.id || '-' || n, 'access', 'authorization_code', $1, u.id, 'fields:read', 1, $2
      FROM generate_series(1, 20) n, users u`, [clientId, NOW + 3600]);
    await pg.query("ANALYZE tokens");
    const [user] = await pg.query<{ id: number }>("SELECT id FROM users ORDER BY id LIMIT 1");
    const plan = (await pg.query(`EXPLAIN ${REVOKE_USER_TOKENS}`, [NOW, user!.id])).map((row) => row["QUERY PLAN"]).join("\n");
    assert.match(plan, /Index Scan using tokens_by_user on tokens|Bitmap Index Scan on tokens_by_user/, plan);
    assert.doesNotMatch(plan, /Seq Scan on tokens/, plan);
  });
});
