import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../src/store/store.ts";
import { IMPORTED_FAMILY_PREFIX, type ImportInput } from "../../src/store/imports.ts";

function input(overrides: Partial<ImportInput> = {}): ImportInput {
  return {
    clients: [{
      line: 2, clientId: "dk-web", secretHash: "a".repeat(64), name: "Web", grantType: "authorization_code",
      redirectUris: ["https://a.example/cb", "https://a.example/cb2"], scope: "fields:read", integrationUser: null,
    }],
    owners: [{ line: 2, ownerKey: "10", username: "alice@example.com", organization: "acme", name: null, passwordHash: null }],
    grants: [{
      clientId: "dk-web", ownerKey: "10", familyId: `${IMPORTED_FAMILY_PREFIX}f1`, scope: "fields:read",
      tokens: [{ line: 2, rowId: "1", tokenHash: "b".repeat(64), kind: "refresh", grantType: "authorization_code", scope: "fields:read", issuedAt: 1, expiresAt: 1000 }],
    }],
    now: 10,
    dryRun: false,
    audit: (result) => ({ at: 10, event: "doorkeeper_imported", clientId: null, userId: null, ip: null, detail: { tokens: result.tokens.imported } }),
    ...overrides,
  };
}

test("apply imports a client, its person, a token family and the consent, with the audit row", async () => {
  const store = openStore(":memory:");
  const result = await store.imports.apply(input());
  assert.deepEqual([result.applications.imported, result.owners.imported, result.tokens.imported, result.consents], [1, 1, 1, 1]);
  const client = await store.clients.findByClientId("dk-web");
  assert.deepEqual(client?.redirectUris, ["https://a.example/cb", "https://a.example/cb2"]);
  const user = await store.users.findByUsername("alice@example.com");
  assert.equal((await store.consents.find(user!.id, client!.id))?.scope, "fields:read");
  assert.equal((await store.tokens.findByHash("b".repeat(64)))?.familyId, `${IMPORTED_FAMILY_PREFIX}f1`);
  assert.equal((await store.audit.list({})).length, 1);
});

test("a dry run reports the same counts and leaves no row behind", async () => {
  const store = openStore(":memory:");
  const result = await store.imports.apply(input({ dryRun: true }));
  assert.equal(result.tokens.imported, 1);
  assert.equal(await store.clients.findByClientId("dk-web"), undefined);
  assert.equal(await store.users.findByUsername("alice@example.com"), undefined);
  assert.equal(await store.tokens.count(), 0);
  assert.deepEqual(await store.audit.list({}), []);
});

test("a failure at the end rolls back everything written before it", async () => {
  const store = openStore(":memory:");
  const failing = input({ audit: () => { throw new Error("disk full"); } });
  await assert.rejects(store.imports.apply(failing), /disk full/);
  assert.equal(await store.clients.findByClientId("dk-web"), undefined);
  assert.equal(await store.tokens.count(), 0);
});

test("tokens of an owner or client that was not imported are refused, one refusal per token", async () => {
  const store = openStore(":memory:");
  const result = await store.imports.apply(input({ owners: [] }));
  assert.equal(result.tokens.refused, 1);
  assert.deepEqual(result.refusals.map((r) => [r.kind, r.id, r.reason]), [["token", "1", "its owner was not imported"]]);
  assert.equal(await store.tokens.count(), 0);
});

test("an owner matched to a person already here keeps their password and joins the owners file's organization", async () => {
  const store = openStore(":memory:");
  const existing = await store.users.insertMember({ username: "alice@example.com", kind: "person", passwordHash: "kept", now: 1 }, "home");
  const result = await store.imports.apply(input());
  assert.deepEqual([result.owners.imported, result.owners.skipped], [0, 1]);
  const orgs = (await store.organizations.listForUser(existing.id)).map((o) => o.slug).sort();
  assert.deepEqual(orgs, ["acme", "home"]);
  assert.equal((await store.users.findById(existing.id))?.passwordHash, "kept");
  const again = await store.imports.apply(input());
  assert.equal(again.owners.skipped, 1, "a re-run matches the same person and adds nothing twice");
  assert.equal((await store.organizations.listForUser(existing.id)).length, 2);
});
