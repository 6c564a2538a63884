import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../../src/store/sqlite/store.ts";
import { StoreConflictError } from "../../../src/store/errors.ts";
import { openDatabase } from "../../../src/store/sqlite/database.ts";
import { createClientStore } from "../../../src/store/sqlite/clients.ts";
import { isRegisteredRedirectUri } from "../../../src/store/rows.ts";
import { randomHash, rowsTest, type StoreRows } from "../../helpers/store_rows.ts";

const integrationUser = (rows: StoreRows) => rows.user({ username: "robot", kind: "integration" });

const web = { clientId: "web", secretHash: "h1", name: "Web", grantType: "authorization_code" as const, redirectUris: ["https://c.example/cb"], scope: "fields:read", integrationUserId: null, now: 10 };

const robotClient = (clientId: string, userId: number) =>
  ({ clientId, secretHash: `h-${clientId}`, name: clientId, grantType: "client_credentials" as const, redirectUris: [], scope: "fields:read", integrationUserId: userId, now: 10 });

/** SQLite's "CHECK constraint failed" or PostgreSQL's "violates check constraint". */
const CHECK_VIOLATION = /CHECK constraint|violates check constraint/;

rowsTest("clients insert and find by public and internal id", async (store, rows) => {
  const client = await store.clients.insert(web);
  assert.equal((await store.clients.findByClientId("web"))?.id, client.id);
  assert.equal((await store.clients.findById(client.id))?.redirectUri, "https://c.example/cb");
  assert.deepEqual(await store.clients.findById(client.id), client);
  assert.deepEqual(client, {
    id: client.id, clientId: "web", secretHash: "h1", name: "Web", grantType: "authorization_code", redirectUri: "https://c.example/cb",
    redirectUris: ["https://c.example/cb"], scope: "fields:read", integrationUserId: null, disabled: false, createdAt: 10, secretRotatedAt: null,
    requireDpop: false,
  });
  await assert.rejects(store.clients.insert(web), StoreConflictError);
  assert.equal(await store.clients.findByClientId("nope"), undefined);
  assert.equal(await store.clients.findById(client.id + 99), undefined);
});

rowsTest("an integration user belongs to one client only (the spec's dedicated integration user)", async (store, rows) => {
  const userId = await integrationUser(rows);
  const job = { ...web, clientId: "job", grantType: "client_credentials" as const, redirectUris: [], integrationUserId: userId };
  await store.clients.insert(job);
  await assert.rejects(store.clients.insert({ ...job, clientId: "job2" }), (error: unknown) =>
    error instanceof StoreConflictError && /already belongs to another client/.test(error.message));
  assert.equal(await store.clients.findByClientId("job2"), undefined);
  await store.clients.insert({ ...web, clientId: "web2" });
  assert.equal((await store.clients.list()).length, 2);
});

rowsTest("of concurrent registrations for one integration user exactly one succeeds", async (store, rows) => {
  const userId = await integrationUser(rows);
  const job = (clientId: string) => ({ ...web, clientId, grantType: "client_credentials" as const, redirectUris: [], integrationUserId: userId });
  const results = await Promise.allSettled(["a", "b", "c", "d", "e"].map((id) => store.clients.insert(job(id))));
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  assert.ok(results.every((r) => r.status === "fulfilled" || r.reason instanceof StoreConflictError));
  assert.equal((await store.clients.list()).length, 1);
});

rowsTest("the schema refuses a code client without redirect URI and a credentials client without integration user", async (store, rows) => {
  await assert.rejects(store.clients.insert({ ...web, clientId: "x", redirectUris: [] }), CHECK_VIOLATION);
  await assert.rejects(store.clients.insert({ ...web, clientId: "y", grantType: "client_credentials", redirectUris: [] }), CHECK_VIOLATION);
});

rowsTest("rotateSecret replaces the digest and revokes tokens only when asked", async (store, rows) => {
  const userId = await integrationUser(rows);
  const job = await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  const token = { tokenHash: "t1", kind: "access" as const, grantType: "client_credentials" as const, scope: "fields:read", issuedAt: 10, expiresAt: 1810 };
  await store.tokens.issue({ clientId: job.id, userId, familyId: null, tokens: [token] });
  const kept = await store.clients.rotateSecret("job", { secretHash: "h2", now: 20, revokeTokens: false });
  assert.equal(kept?.secretHash, "h2");
  assert.equal(kept?.secretRotatedAt, 20);
  assert.ok(await store.tokens.findActiveAccess("t1", 30));
  await store.clients.rotateSecret("job", { secretHash: "h3", now: 40, revokeTokens: true });
  assert.equal(await store.tokens.findActiveAccess("t1", 50), undefined);
  assert.equal((await store.tokens.findByHash("t1"))?.revokedAt, 40);
  assert.equal(await store.clients.rotateSecret("nope", { secretHash: "h", now: 1, revokeTokens: false }), undefined);
});

rowsTest("rotateSecret with revokeTokens revokes the client's grant families too", async (store, rows) => {
  const client = await store.clients.insert(web);
  const other = await store.clients.insert({ ...web, clientId: "other" });
  const userId = await rows.user();
  const family = async (clientId: number) => {
    const familyId = randomHash().slice(0, 22);
    await store.codes.issue({ codeHash: randomHash(), familyId, clientId, userId, redirectUri: "https://c.example/cb",
      scope: "fields:read", codeChallenge: null, issuedAt: 10, expiresAt: 610 });
    return familyId;
  };
  const [mine, theirs] = [await family(client.id), await family(other.id)];
  await store.clients.rotateSecret("web", { secretHash: "h2", now: 20, revokeTokens: true });
  const into = (clientId: number, familyId: string) => store.tokens.issue({ clientId, userId, familyId, tokens: [] });
  assert.equal(await into(client.id, mine), "family_revoked");
  assert.equal(await into(other.id, theirs), "issued");
});

rowsTest("a disabled client's tokens stop being active", async (store, rows) => {
  const userId = await integrationUser(rows);
  const job = await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  await store.tokens.issue({ clientId: job.id, userId, familyId: null, tokens: [{ tokenHash: "t", kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: 1, expiresAt: 100 }] });
  assert.equal((await store.clients.setDisabled("job", true))?.disabled, true);
  assert.equal(await store.tokens.findActiveAccess("t", 2), undefined);
  await store.clients.setDisabled("job", false);
  assert.ok(await store.tokens.findActiveAccess("t", 2));
  assert.equal(await store.clients.setDisabled("nope", true), undefined);
});

rowsTest("replaceRedirectUri changes one authorization-code client and returns its previous URI", async (store, rows) => {
  const userId = await integrationUser(rows);
  await store.clients.insert(web);
  await store.clients.insert({ ...web, clientId: "other" });
  await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  assert.deepEqual(await store.clients.replaceRedirectUri("web", "http://localhost:9/cb"), ["https://c.example/cb"]);
  assert.equal((await store.clients.findByClientId("web"))?.redirectUri, "http://localhost:9/cb");
  assert.deepEqual(await store.clients.replaceRedirectUri("web", "http://localhost:9/cb"), ["http://localhost:9/cb"]);
  assert.equal((await store.clients.findByClientId("other"))?.redirectUri, "https://c.example/cb");
  assert.equal(await store.clients.replaceRedirectUri("job", "http://localhost:9/cb"), undefined);
  assert.equal((await store.clients.findByClientId("job"))?.redirectUri, null);
  assert.equal(await store.clients.replaceRedirectUri("nobody", "http://localhost:9/cb"), undefined);
});

rowsTest("remove deletes the client with its tokens and approvals, counting what was live", async (store, rows) => {
  const client = await store.clients.insert(web);
  const other = await store.clients.insert({ ...web, clientId: "other" });
  const userId = await rows.user();
  const token = (tokenHash: string, expiresAt: number) =>
    ({ tokenHash, kind: "access" as const, grantType: "authorization_code" as const, scope: "fields:read", issuedAt: 1, expiresAt });
  await store.tokens.issue({ clientId: client.id, userId, familyId: null, tokens: [token("live", 100), token("expired", 20), token("revoked", 100)] });
  await store.tokens.revoke("revoked", client.id, 30);
  await store.tokens.issue({ clientId: other.id, userId, familyId: null, tokens: [token("theirs", 100)] });
  await rows.consent(userId, client.id, "fields:read");
  const removed = await store.clients.remove("web", 30);
  assert.deepEqual(removed, { client, tokensRevoked: 1, consentsRemoved: 1 });
  assert.equal(await store.clients.findByClientId("web"), undefined);
  assert.equal(await store.tokens.findByHash("live"), undefined);
  assert.equal(await rows.consentScope(userId, client.id), undefined);
  assert.ok(await store.tokens.findActiveAccess("theirs", 30));
  assert.equal(await store.clients.remove("web", 30), undefined);
});

test("a registration whose commit fails is reported, never acknowledged with credentials that were not stored", async () => {
  const db = openDatabase(":memory:");
  const clients = createClientStore(db);
  // The commit fails (a deferred foreign key to a user that does not exist), as it can on a full disk. With the
  // INSERT … RETURNING read by .get() in autocommit, the row came back and the failed commit went unnoticed.
  db.exec("PRAGMA defer_foreign_keys = ON");
  const job = { ...web, clientId: "job", grantType: "client_credentials" as const, redirectUris: [], integrationUserId: 999 };
  await assert.rejects(clients.insert(job), /FOREIGN KEY constraint failed/);
  assert.deepEqual(await clients.list(), []);
  db.close();
});


rowsTest("a client keeps every registered redirect URI, in order, and the first is its redirectUri", async (store) => {
  const uris = ["https://c.example/cb", "https://c.example/cb2?tenant=1", "http://127.0.0.1:8080/cb"];
  await store.clients.insert({ ...web, redirectUris: uris });
  const found = await store.clients.findByClientId("web");
  assert.deepEqual(found?.redirectUris, uris);
  assert.equal(found?.redirectUri, uris[0]);
  assert.deepEqual(await store.clients.replaceRedirectUri("web", "https://new.example/cb"), uris);
  assert.deepEqual((await store.clients.findByClientId("web"))?.redirectUris, ["https://new.example/cb"]);
});

rowsTest("clients insert refuses a redirect URI that would split the stored list", async (store) => {
  await assert.rejects(store.clients.insert({ ...web, redirectUris: ["https://a.example/cb\nhttps://b.example/cb"] }), TypeError);
  await assert.rejects(store.clients.insert({ ...web, redirectUris: ["https://a.example/cb", ""] }), TypeError);
  assert.equal(await store.clients.findByClientId("web"), undefined);
});

const registered = { redirectUris: ["https://c.example/cb", "https://c.example/other"] };
for (const [presented, expected] of [
  ["https://c.example/cb", true],
  ["https://c.example/other", true],
  ["https://c.example/cb/", false],
  ["https://c.example/c", false],
  ["https://C.example/cb", false],
  ["https://c.example/cb?x=1", false],
  ["https://c.example/cb\nhttps://c.example/other", false],
  ["", false],
] as const) {
  test(`isRegisteredRedirectUri: ${JSON.stringify(presented)} ${expected ? "matches" : "does not match"}`, () => {
    assert.equal(isRegisteredRedirectUri(registered, presented), expected);
  });
}

rowsTest("a resource server is stored and read back with no grant, and replaceRedirectUri leaves it alone", async (store) => {
  const rs = await store.clients.insert({ ...web, clientId: "rs", grantType: null, redirectUris: [], scope: "" });
  assert.equal(rs.grantType, null);
  assert.deepEqual([rs.redirectUri, rs.redirectUris], [null, []]);
  assert.deepEqual(await store.clients.findByClientId("rs"), rs);
  assert.equal(await store.clients.replaceRedirectUri("rs", "https://c.example/cb"), undefined);
  assert.deepEqual(await store.clients.findByClientId("rs"), rs);
  assert.equal((await store.clients.insert(web)).grantType, "authorization_code");
});

test("the schema refuses a resource-server row that names a redirect URI or an integration user", () => {
  const db = openDatabase(":memory:");
  const insert = db.prepare(`INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri, scope,
    created_at, resource_server) VALUES (?, 'h', 'n', ?, ?, '', 1, 1)`);
  insert.run("ok", "authorization_code", "");
  for (const [grant, uri] of [["authorization_code", "https://c.example/cb"], ["client_credentials", ""]] as const) {
    assert.throws(() => insert.run(`bad-${grant}`, grant, uri), CHECK_VIOLATION);
  }
  db.close();
});

rowsTest("clients: require_dpop is set at registration or later, and client authentication reads it", async (store) => {
  const client = await store.clients.insert({ ...web, requireDpop: true });
  assert.equal(client.requireDpop, true);
  const times = { now: 100, windowSeconds: 60 };
  const attempt = { clientId: "web", digest: "h1", keys: { registered: { key: "c:web", limit: 5 }, unknown: undefined } };
  const authenticated = async () => {
    const check = await store.throttles.authenticateClient(attempt, times);
    return check.outcome === "authenticated" ? check.client.requireDpop : undefined;
  };
  assert.equal(await authenticated(), true);
  assert.equal((await store.clients.setRequireDpop("web", false))?.requireDpop, false);
  assert.equal(await authenticated(), false);
  assert.equal((await store.clients.findByClientId("web"))?.requireDpop, false);
  assert.equal(await store.clients.setRequireDpop("nope", true), undefined);
});
