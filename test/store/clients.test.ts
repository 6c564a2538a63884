import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore, type Store } from "../../src/store/store.ts";
import { StoreConflictError } from "../../src/store/errors.ts";
import { openDatabase } from "../../src/store/sqlite.ts";
import { createClientStore, isRegisteredRedirectUri } from "../../src/store/clients.ts";

async function setup(): Promise<{ store: Store; userId: number }> {
  const store = openStore(":memory:");
  const user = await store.users.insert({ username: "robot", kind: "integration", now: 1 });
  return { store, userId: user.id };
}

const web = { clientId: "web", secretHash: "h1", name: "Web", grantType: "authorization_code" as const, redirectUris: ["https://c.example/cb"], scope: "fields:read", integrationUserId: null, now: 10 };

test("clients insert and find by public and internal id", async () => {
  const { store } = await setup();
  const client = await store.clients.insert(web);
  assert.equal((await store.clients.findByClientId("web"))?.id, client.id);
  assert.equal((await store.clients.findById(client.id))?.redirectUri, "https://c.example/cb");
  await assert.rejects(store.clients.insert(web), StoreConflictError);
});

test("an integration user belongs to one client only (the spec's dedicated integration user)", async () => {
  const { store, userId } = await setup();
  const job = { ...web, clientId: "job", grantType: "client_credentials" as const, redirectUris: [], integrationUserId: userId };
  await store.clients.insert(job);
  await assert.rejects(store.clients.insert({ ...job, clientId: "job2" }), (error: unknown) =>
    error instanceof StoreConflictError && /already belongs to another client/.test(error.message));
  assert.equal(await store.clients.findByClientId("job2"), undefined);
  await store.clients.insert({ ...web, clientId: "web2" });
  assert.equal((await store.clients.list()).length, 2);
});

test("the schema refuses a code client without redirect URI and a credentials client without integration user", async () => {
  const { store } = await setup();
  await assert.rejects(store.clients.insert({ ...web, clientId: "x", redirectUris: [] }), /CHECK constraint/);
  await assert.rejects(store.clients.insert({ ...web, clientId: "y", grantType: "client_credentials", redirectUris: [] }), /CHECK constraint/);
});

test("rotateSecret replaces the digest and revokes tokens only when asked", async () => {
  const { store, userId } = await setup();
  const job = await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  const token = { tokenHash: "t1", kind: "access" as const, grantType: "client_credentials" as const, scope: "fields:read", issuedAt: 10, expiresAt: 1810 };
  await store.tokens.issue({ clientId: job.id, userId, familyId: null, tokens: [token] });
  const kept = await store.clients.rotateSecret("job", { secretHash: "h2", now: 20, revokeTokens: false });
  assert.equal(kept?.secretHash, "h2");
  assert.equal(kept?.secretRotatedAt, 20);
  assert.ok(await store.tokens.findActiveAccess("t1", 30));
  await store.clients.rotateSecret("job", { secretHash: "h3", now: 40, revokeTokens: true });
  assert.equal(await store.tokens.findActiveAccess("t1", 50), undefined);
  assert.equal(await store.clients.rotateSecret("nope", { secretHash: "h", now: 1, revokeTokens: false }), undefined);
});

test("a disabled client's tokens stop being active", async () => {
  const { store, userId } = await setup();
  const job = await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  await store.tokens.issue({ clientId: job.id, userId, familyId: null, tokens: [{ tokenHash: "t", kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: 1, expiresAt: 100 }] });
  assert.equal((await store.clients.setDisabled("job", true))?.disabled, true);
  assert.equal(await store.tokens.findActiveAccess("t", 2), undefined);
  await store.clients.setDisabled("job", false);
  assert.ok(await store.tokens.findActiveAccess("t", 2));
  assert.equal(await store.clients.setDisabled("nope", true), undefined);
});

test("replaceRedirectUri changes one authorization-code client and returns its previous URI", async () => {
  const { store, userId } = await setup();
  await store.clients.insert(web);
  await store.clients.insert({ ...web, clientId: "other" });
  await store.clients.insert({ ...web, clientId: "job", grantType: "client_credentials", redirectUris: [], integrationUserId: userId });
  assert.deepEqual(await store.clients.replaceRedirectUri("web", "http://localhost:9/cb"), ["https://c.example/cb"]);
  assert.equal((await store.clients.findByClientId("web"))?.redirectUri, "http://localhost:9/cb");
  assert.equal((await store.clients.findByClientId("other"))?.redirectUri, "https://c.example/cb");
  assert.equal(await store.clients.replaceRedirectUri("job", "http://localhost:9/cb"), undefined);
  assert.equal((await store.clients.findByClientId("job"))?.redirectUri, null);
  assert.equal(await store.clients.replaceRedirectUri("nobody", "http://localhost:9/cb"), undefined);
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

const robotClient = (clientId: string, userId: number) =>
  ({ clientId, secretHash: `h-${clientId}`, name: clientId, grantType: "client_credentials" as const, redirectUris: [], scope: "fields:read", integrationUserId: userId, now: 10 });

test("findForTokenRequest remembers only client_credentials clients that may issue, marked and frozen", async () => {
  const { store, userId } = await setup();
  await store.clients.insert(web);
  await store.clients.insert(robotClient("robot", userId));
  assert.equal(store.clients.rememberedForTokenRequest("robot"), undefined);
  const read = await store.clients.findForTokenRequest("robot");
  assert.equal(read?.remembered, undefined);
  const remembered = store.clients.rememberedForTokenRequest("robot");
  assert.deepEqual(remembered, { ...read, remembered: true });
  assert.equal(Object.isFrozen(remembered), true);
  await store.clients.findForTokenRequest("web");
  assert.equal(store.clients.rememberedForTokenRequest("web"), undefined);
  // A read that finds the client no longer usable drops what was remembered.
  await store.users.setDisabled(userId, true);
  await store.clients.findForTokenRequest("robot");
  assert.equal(store.clients.rememberedForTokenRequest("robot"), undefined);
});

test("a rotation, disable or delete made through this store forgets the remembered row at once", async () => {
  const { store, userId } = await setup();
  await store.clients.insert(robotClient("robot", userId));
  const changes = [
    () => store.clients.rotateSecret("robot", { secretHash: "h2", now: 11, revokeTokens: false }),
    () => store.clients.setDisabled("robot", true),
    () => store.clients.remove("robot", 12),
  ];
  for (const change of changes) {
    await store.clients.setDisabled("robot", false);
    await store.clients.findForTokenRequest("robot");
    assert.notEqual(store.clients.rememberedForTokenRequest("robot"), undefined);
    await change();
    assert.equal(store.clients.rememberedForTokenRequest("robot"), undefined);
  }
});

test("at most 1,024 clients are remembered: the one remembered longest ago goes first", async () => {
  const store = openStore(":memory:");
  const ids: string[] = [];
  for (let i = 0; i <= 1024; i++) {
    const user = await store.users.insert({ username: `robot${i}`, kind: "integration", now: 1 });
    ids.push((await store.clients.insert(robotClient(`c${i}`, user.id))).clientId);
  }
  for (const id of ids.slice(0, 1024)) await store.clients.findForTokenRequest(id);
  await store.clients.findForTokenRequest(ids[0]!); // read again: now the most recent
  await store.clients.findForTokenRequest(ids[1024]!);
  assert.notEqual(store.clients.rememberedForTokenRequest(ids[0]!), undefined);
  assert.equal(store.clients.rememberedForTokenRequest(ids[1]!), undefined);
  assert.notEqual(store.clients.rememberedForTokenRequest(ids[1024]!), undefined);
});

test("a client keeps every registered redirect URI, in order, and the first is its redirectUri", async () => {
  const { store } = await setup();
  const uris = ["https://c.example/cb", "https://c.example/cb2?tenant=1", "http://127.0.0.1:8080/cb"];
  await store.clients.insert({ ...web, redirectUris: uris });
  const found = await store.clients.findByClientId("web");
  assert.deepEqual(found?.redirectUris, uris);
  assert.equal(found?.redirectUri, uris[0]);
  assert.deepEqual((await store.clients.findForTokenRequest("web"))?.redirectUris, uris);
  assert.deepEqual(await store.clients.replaceRedirectUri("web", "https://new.example/cb"), uris);
  assert.deepEqual((await store.clients.findByClientId("web"))?.redirectUris, ["https://new.example/cb"]);
});

test("clients insert refuses a redirect URI that would split the stored list", async () => {
  const { store } = await setup();
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
