import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { StoreConflictError } from "../../../src/store/errors.ts";
import { openDatabase } from "../../../src/store/sqlite/database.ts";
import { REVOKE_USER_TOKENS } from "../../../src/store/sqlite/users.ts";
import { buildTestApp } from "../../helpers/test_app.ts";
import { postJson } from "../../helpers/requests.ts";
import { authCodeTokens, codeBody, issueCode, refreshBody } from "../../helpers/codes.ts";
import { gql } from "../../helpers/graphql.ts";
import { storeTest } from "../../helpers/stores.ts";
import { seedClient, seedCode, seedGrant, seedMachineClient, seedPerson } from "../../helpers/store_seed.ts";

storeTest("users insert, find by id and by case-insensitive username", async (store) => {
  const alice = await store.users.insert({ username: "Alice@example.com", kind: "person", passwordHash: "h", now: 5 });
  assert.deepEqual(alice, {
    id: alice.id,
    username: "Alice@example.com",
    name: null,
    kind: "person",
    passwordHash: "h",
    disabled: false,
    createdAt: 5,
  });
  assert.deepEqual(await store.users.findById(alice.id), alice);
  assert.equal((await store.users.findByUsername("alice@EXAMPLE.com"))?.id, alice.id);
  assert.equal(await store.users.findByUsername("bob@example.com"), undefined);
  assert.equal(await store.users.findById(alice.id + 1000), undefined);
});

storeTest("a taken username is a StoreConflictError, whatever its case", async (store) => {
  await store.users.insert({ username: "a@example.com", kind: "person", now: 1 });
  await assert.rejects(store.users.insert({ username: "A@example.com", kind: "person", now: 1 }), StoreConflictError);
});

storeTest("usernames fold ASCII letters only, as SQLite's NOCASE does", async (store) => {
  const accented = await store.users.insert({ username: "\u00c9mile", kind: "person", now: 1 });
  const plain = await store.users.insert({ username: "\u00e9mile", kind: "person", now: 1 });
  assert.notEqual(accented.id, plain.id);
  assert.equal((await store.users.findByUsername("\u00e9MILE"))?.id, plain.id);
});

storeTest("an integration user can never hold a password hash", async (store) => {
  await assert.rejects(store.users.insert({ username: "robot", kind: "integration", passwordHash: "h", now: 1 }), /check constraint/i);
  const robot = await store.users.insert({ username: "robot", kind: "integration", now: 1 });
  assert.equal(await store.users.updatePasswordHash(robot.id, "h", { replacing: "" }), false);
  await store.users.replacePassword(robot.id, "h");
  assert.equal((await store.users.findById(robot.id))?.passwordHash, null);
});

storeTest("updatePasswordHash replaces only the hash it was told it replaces", async (store) => {
  const ann = await store.users.insert({ username: "ann", kind: "person", passwordHash: "h1", now: 1 });
  assert.equal(await store.users.updatePasswordHash(ann.id, "h2", { replacing: "h0" }), false);
  assert.equal((await store.users.findById(ann.id))?.passwordHash, "h1");
  assert.equal(await store.users.updatePasswordHash(ann.id, "h2", { replacing: "h1" }), true);
  assert.equal((await store.users.findById(ann.id))?.passwordHash, "h2");
});

storeTest("users can be disabled and listed in id order", async (store) => {
  const a = await store.users.insert({ username: "a", kind: "person", now: 1 });
  await store.users.insert({ username: "b", kind: "integration", now: 1 });
  await store.users.setDisabled(a.id, true);
  const list = await store.users.list();
  assert.deepEqual(list.map((u) => [u.username, u.kind, u.disabled]), [["a", "person", true], ["b", "integration", false]]);
  await store.users.setDisabled(a.id, false);
  assert.equal((await store.users.findById(a.id))?.disabled, false);
});

storeTest("insertMember creates the organization and the membership with the user", async (store) => {
  const user = await store.users.insertMember({ username: "ann", kind: "person", passwordHash: "h", now: 1 }, "acme");
  const orgs = await store.organizations.listForUser(user.id);
  assert.deepEqual(orgs.map((o) => o.slug), ["acme"]);
  const again = await store.users.insertMember({ username: "bob", kind: "integration", now: 2 }, "acme");
  assert.deepEqual((await store.organizations.listForUser(again.id)).map((o) => o.id), orgs.map((o) => o.id));
  assert.equal((await store.organizations.list()).length, 1);
  const named = await store.users.insertMember({ username: "cy", kind: "person", now: 3 }, "north", "North Farms");
  assert.deepEqual((await store.organizations.listForUser(named.id)).map((o) => o.name), ["North Farms"]);
});

storeTest("insertMember with a taken username leaves nothing behind: no organization, no membership", async (store) => {
  await store.users.insertMember({ username: "ann", kind: "person", passwordHash: "h", now: 1 }, "acme");
  await assert.rejects(
    store.users.insertMember({ username: "ANN", kind: "person", passwordHash: "h", now: 2 }, "race-org"),
    StoreConflictError,
  );
  assert.deepEqual((await store.organizations.list()).map((o) => o.slug), ["acme"]);
});

storeTest("replacePassword ends every session; with revokeTokensAt also tokens, families and remembered consents", async (store) => {
  const now = 1_000;
  const ann = await seedPerson(store, now);
  const bob = await seedPerson(store, now);
  const client = await seedClient(store, now);
  const session = (user: { id: number }, hash: string) =>
    store.sessions.insert({ sessionHash: hash.padEnd(64, "0"), userId: user.id, createdAt: now, expiresAt: now + 100 });
  await session(ann, "a1");
  await session(ann, "a2");
  await session(bob, "b1");
  const annGrant = await seedGrant(store, client, ann, now);
  const bobGrant = await seedGrant(store, client, bob, now);
  await store.consents.grant(ann.id, client.id, { scope: "fields:read", now });
  await store.consents.grant(bob.id, client.id, { scope: "fields:read", now });

  assert.deepEqual(await store.users.replacePassword(ann.id, "h2"), { sessionsEnded: 2, tokensRevoked: 0 });
  assert.equal((await store.users.findById(ann.id))?.passwordHash, "h2");
  assert.ok(await store.tokens.findActiveAccess(annGrant.access, now), "without revokeTokensAt tokens stay");
  assert.deepEqual(await store.users.replacePassword(ann.id, "h3", { revokeTokensAt: now + 1 }), { sessionsEnded: 0, tokensRevoked: 2 });
  assert.equal(await store.tokens.findActiveAccess(annGrant.access, now + 1), undefined);
  assert.equal((await store.tokens.findByHash(annGrant.refresh))?.revokedAt, now + 1);
  assert.equal(await store.consents.find(ann.id, client.id), undefined);
  const refused = await store.tokens.issue({ clientId: client.id, userId: ann.id, familyId: annGrant.familyId, tokens: [] });
  assert.equal(refused, "family_revoked", "the grant family is revoked too");
  assert.ok(await store.tokens.findActiveAccess(bobGrant.access, now + 1), "another user's tokens are untouched");
  assert.ok(await store.sessions.findActive("b1".padEnd(64, "0"), now));
  assert.ok(await store.consents.find(bob.id, client.id));
});

storeTest("setDisabled ends sessions when disabling, and with revokeTokensAt revokes the user's live tokens only", async (store) => {
  const now = 1_000;
  const ann = await seedPerson(store, now);
  const client = await seedClient(store, now);
  await store.sessions.insert({ sessionHash: "s".repeat(64), userId: ann.id, createdAt: now, expiresAt: now + 100 });
  const expired = await seedGrant(store, client, ann, now - 500, { accessTtl: 100, refreshTtl: 200 });
  const live = await seedGrant(store, client, ann, now);
  assert.deepEqual(await store.users.setDisabled(ann.id, true), { sessionsEnded: 1, tokensRevoked: 0 });
  assert.equal(await store.tokens.findActiveAccess(live.access, now), undefined, "refused while disabled");
  assert.deepEqual(await store.users.setDisabled(ann.id, false), { sessionsEnded: 0, tokensRevoked: 0 });
  assert.ok(await store.tokens.findActiveAccess(live.access, now), "enabled again before expiry, the token works");
  assert.deepEqual(await store.users.setDisabled(ann.id, true, { revokeTokensAt: now }), { sessionsEnded: 0, tokensRevoked: 2 });
  assert.equal((await store.tokens.findByHash(expired.access))?.revokedAt, null, "an expired token is left as it was");
  await store.users.setDisabled(ann.id, false);
  assert.equal(await store.tokens.findActiveAccess(live.access, now), undefined, "revoked tokens stay revoked");
});

storeTest("erase deletes the user's grants, sessions, consents and memberships and leaves a tombstone", async (store) => {
  const now = 1_000;
  const ann = await seedPerson(store, now, { username: "ann" });
  const bob = await seedPerson(store, now);
  const client = await seedClient(store, now);
  const grant = await seedGrant(store, client, ann, now);
  const expired = await seedGrant(store, client, ann, now - 5_000);
  const pending = await seedCode(store, client, ann, now);
  const kept = await seedGrant(store, client, bob, now);
  await store.sessions.insert({ sessionHash: "s".repeat(64), userId: ann.id, createdAt: now, expiresAt: now + 100 });
  await store.consents.grant(ann.id, client.id, { scope: "fields:read", now });
  await store.audit.insert({ at: now, event: "sign_in", clientId: null, userId: ann.id, ip: "192.0.2.1", detail: null });
  await store.audit.insert({ at: now, event: "sign_in", clientId: null, userId: bob.id, ip: "192.0.2.2", detail: null });

  assert.deepEqual(await store.users.erase(ann.id, now), {
    status: "erased",
    tokensRevoked: 2,
    consents: 1,
    sessionsEnded: 1,
    memberships: 1,
    auditEventsAnonymized: 1,
  });
  for (const token of [grant.access, grant.refresh, expired.access]) assert.equal(await store.tokens.findByHash(token), undefined);
  assert.equal(
    (await store.tokens.exchangeCode(pending.codeHash, client, now, () => ({ issue: { tokens: [] } }))).status,
    "missing",
    "an unused code is gone",
  );
  assert.deepEqual(await store.organizations.idsForUser(ann.id), []);
  assert.deepEqual(await store.consents.listForUser(ann.id), []);
  assert.deepEqual((await store.audit.list({})).map((e) => [e.userId, e.ip]), [[ann.id, null], [bob.id, "192.0.2.2"]]);
  const tombstone = await store.users.findById(ann.id);
  assert.deepEqual(tombstone && { ...tombstone, id: 0 }, {
    id: 0,
    username: `(deleted user ${ann.id})`,
    name: null,
    kind: "person",
    passwordHash: null,
    disabled: true,
    createdAt: now,
  });
  assert.equal(await store.users.findByUsername(`(deleted user ${ann.id})`), undefined);
  assert.deepEqual((await store.users.list()).map((u) => u.id), [bob.id]);
  assert.notEqual((await store.users.insert({ username: "ANN", kind: "person", now })).id, ann.id, "the username is free again");
  assert.ok(await store.tokens.findActiveAccess(kept.access, now), "another user's grant is untouched");
  assert.deepEqual(await store.users.erase(ann.id, now), { status: "missing" });
  assert.deepEqual(await store.users.erase(ann.id + 1000, now), { status: "missing" });
});

storeTest("erase refuses the integration user a client acts as", async (store) => {
  const { client, robot } = await seedMachineClient(store, 1);
  assert.deepEqual(await store.users.erase(robot.id, 2), { status: "client_integration_user", clientId: client.clientId });
  assert.equal((await store.users.findById(robot.id))?.username, robot.username);
});

test("erase ends a real grant: the access token is refused, the refresh token and an unused code are dead", async () => {
  const t = buildTestApp();
  const { client, issued, tokens } = await authCodeTokens(t);
  const pending = await issueCode(t, client, { userId: issued.userId });
  assert.equal((await gql(t, tokens.access_token, "{ fields { total_count } }")).status, 200);
  const outcome = await t.store.users.erase(issued.userId, t.clock.nowSeconds());
  assert.equal(outcome.status, "erased");
  assert.equal((await gql(t, tokens.access_token, "{ fields { total_count } }")).status, 401);
  const refreshed = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal((await refreshed.json()).error, "invalid_grant");
  const exchanged = await t.app.fetch(postJson("/oauth/token", codeBody(client, pending)));
  assert.equal((await exchanged.json()).error, "invalid_grant");
  assert.equal(await t.store.users.findByUsername(`(deleted user ${issued.userId})`), undefined, "a tombstone is nobody's sign-in name");
  assert.deepEqual(await t.store.users.erase(issued.userId, t.clock.nowSeconds()), { status: "missing" });
});

test("revoking a user's tokens (disabled, password changed) searches tokens_by_user instead of scanning the table", () => {
  const db = openDatabase(":memory:");
  try {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${REVOKE_USER_TOKENS}`).all(1, 1, 1) as { detail: string }[];
    assert.match(plan.map((line) => line.detail).join("\n"), /^SEARCH tokens USING INDEX tokens_by_user \(user_id=\?\)$/);
  } finally {
    db.close();
  }
});
