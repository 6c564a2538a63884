import assert from "node:assert/strict";
import { storeTest } from "../helpers/stores.ts";
import { IMPORTED_FAMILY_PREFIX } from "../../src/store/imports.ts";
import type { ImportInput } from "../../src/store/contract.ts";

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

storeTest("apply imports a client, its person, a token family and the consent, with the audit row", async (store) => {
  const result = await store.imports.apply(input());
  assert.deepEqual([result.applications.imported, result.owners.imported, result.tokens.imported, result.consents], [1, 1, 1, 1]);
  const client = await store.clients.findByClientId("dk-web");
  assert.deepEqual(client?.redirectUris, ["https://a.example/cb", "https://a.example/cb2"]);
  const user = await store.users.findByUsername("alice@example.com");
  assert.equal((await store.consents.find(user!.id, client!.id))?.scope, "fields:read");
  assert.equal((await store.tokens.findByHash("b".repeat(64)))?.familyId, `${IMPORTED_FAMILY_PREFIX}f1`);
  assert.equal((await store.audit.list({})).length, 1);
});

storeTest("a dry run reports the same counts and leaves no row behind", async (store) => {
  const result = await store.imports.apply(input({ dryRun: true }));
  assert.equal(result.tokens.imported, 1);
  assert.equal(await store.clients.findByClientId("dk-web"), undefined);
  assert.equal(await store.users.findByUsername("alice@example.com"), undefined);
  assert.equal(await store.tokens.count(), 0);
  assert.deepEqual(await store.audit.list({}), []);
});

storeTest("a failure at the end rolls back everything written before it", async (store) => {
  const failing = input({ audit: () => { throw new Error("disk full"); } });
  await assert.rejects(store.imports.apply(failing), /disk full/);
  assert.equal(await store.clients.findByClientId("dk-web"), undefined);
  assert.equal(await store.tokens.count(), 0);
});

storeTest("tokens of an owner or client that was not imported are refused, one refusal per token", async (store) => {
  const result = await store.imports.apply(input({ owners: [] }));
  assert.equal(result.tokens.refused, 1);
  assert.deepEqual(result.refusals.map((r) => [r.kind, r.id, r.reason]), [["token", "1", "its owner was not imported"]]);
  assert.equal(await store.tokens.count(), 0);
});

storeTest("an owner matched to a person already here keeps their password and joins the owners file's organization", async (store) => {
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

storeTest("a second run finds everything in place and imports nothing", async (store) => {
  const first = await store.imports.apply(input());
  const again = await store.imports.apply(input());
  assert.deepEqual([again.applications, again.owners, again.tokens, again.consents, again.refusals], [
    { imported: 0, skipped: 1, removed: 0, refused: 0 },
    { imported: 0, skipped: 1, removed: 0, refused: 0 },
    { imported: 0, skipped: 1, removed: 0, refused: 0 },
    0,
    [],
  ]);
  assert.equal(first.tokens.imported, 1);
});

storeTest("a dry run or a failed run leaves nothing for the next run to skip", async (store) => {
  await store.imports.apply(input({ dryRun: true }));
  await assert.rejects(store.imports.apply(input({ audit: () => { throw new Error("disk full"); } })), /disk full/);
  const real = await store.imports.apply(input());
  assert.deepEqual([real.applications.imported, real.owners.imported, real.tokens.imported, real.consents], [1, 1, 1, 1]);
});

storeTest("a re-run with more tokens of a family adds them to the family the first run made", async (store) => {
  const refresh = input().grants[0]!.tokens[0]!;
  const access = { ...refresh, line: 3, rowId: "2", tokenHash: "c".repeat(64), kind: "access" as const };
  await store.imports.apply(input());
  // The planner picks a new random family id each run; the tokens already imported name the one to use.
  const grants = [{ ...input().grants[0]!, familyId: `${IMPORTED_FAMILY_PREFIX}f2`, tokens: [refresh, access] }];
  const again = await store.imports.apply(input({ grants }));
  assert.deepEqual([again.tokens.imported, again.tokens.skipped, again.consents], [1, 1, 0]);
  assert.equal((await store.tokens.findByHash("c".repeat(64)))?.familyId, `${IMPORTED_FAMILY_PREFIX}f1`);
});

storeTest("a client_credentials client gets its integration user, which no second client may share, whatever its case", async (store) => {
  const sync = {
    line: 3, clientId: "dk-sync", secretHash: "d".repeat(64), name: "Sync", grantType: "client_credentials" as const,
    redirectUris: [], scope: "fields:read", integrationUser: { username: "sync-bot", organization: "acme" },
  };
  const taken = { ...sync, line: 4, clientId: "dk-taken", integrationUser: { username: "SYNC-bot", organization: "acme" } };
  const cc = {
    clientId: "dk-sync", ownerKey: null, familyId: null, scope: "fields:read",
    tokens: [{ line: 5, rowId: "9", tokenHash: "e".repeat(64), kind: "access" as const, grantType: "client_credentials" as const, scope: "fields:read", issuedAt: 1, expiresAt: 1000 }],
  };
  const base = input();
  const result = await store.imports.apply(input({ clients: [...base.clients, sync, taken], grants: [...base.grants, cc] }));
  assert.deepEqual([result.applications, result.integrationUsers], [
    { imported: 2, skipped: 0, removed: 0, refused: 1 },
    { imported: 1, skipped: 0, removed: 0, refused: 1 },
  ]);
  assert.deepEqual(result.refusals.map((r) => [r.kind, r.id]), [["integration_user", "dk-taken"], ["application", "dk-taken"]]);
  assert.equal(result.tokens.imported, 2);
  assert.equal(result.consents, 1, "a client-credentials token records no consent");
  const again = await store.imports.apply(input({ clients: [...base.clients, sync], grants: [...base.grants, cc] }));
  assert.deepEqual([again.applications.skipped, again.tokens.skipped, again.integrationUsers.imported], [2, 2, 0]);
});

/** The first run's grant with one more token, as a later export lists it. */
function withNewToken(hash: string) {
  const grant = input().grants[0]!;
  const token = { ...grant.tokens[0]!, line: 3, rowId: "2", tokenHash: hash, kind: "access" as const };
  return { grants: [{ ...grant, tokens: [...grant.tokens, token] }] };
}

storeTest("a re-run keeps out a client deleted since, with its tokens, and says so", async (store) => {
  await store.imports.apply(input());
  await store.clients.remove("dk-web", 20);
  const again = await store.imports.apply(input(withNewToken("c".repeat(64))));
  assert.deepEqual([again.applications, again.tokens], [
    { imported: 0, skipped: 0, removed: 1, refused: 0 },
    { imported: 0, skipped: 0, removed: 2, refused: 0 },
  ]);
  assert.equal(await store.clients.findByClientId("dk-web"), undefined);
  assert.equal(await store.tokens.count(), 0);
});

storeTest("a re-run keeps out a person erased since, with their tokens and consent", async (store) => {
  await store.imports.apply(input());
  const alice = await store.users.findByUsername("alice@example.com");
  assert.equal((await store.users.erase(alice!.id, 20)).status, "erased");
  const again = await store.imports.apply(input(withNewToken("c".repeat(64))));
  assert.deepEqual([again.owners, again.tokens, again.consents], [
    { imported: 0, skipped: 0, removed: 1, refused: 0 },
    { imported: 0, skipped: 0, removed: 2, refused: 0 },
    0,
  ]);
  assert.equal(await store.users.findByUsername("alice@example.com"), undefined);
  assert.equal(await store.tokens.findByHash("b".repeat(64)), undefined);
});

storeTest("a re-run leaves a membership the person left since, and matches them without joining again", async (store) => {
  await store.imports.apply(input());
  const alice = await store.users.findByUsername("alice@example.com");
  const acme = await store.organizations.findBySlug("acme");
  await store.organizations.removeMember(acme!.id, alice!.id);
  const again = await store.imports.apply(input());
  assert.deepEqual(again.owners, { imported: 0, skipped: 1, removed: 0, refused: 0 });
  assert.deepEqual(await store.organizations.listForUser(alice!.id), []);
});

storeTest("a re-run keeps out new tokens of an approval revoked since; revoked tokens stay revoked", async (store) => {
  await store.imports.apply(input());
  const alice = await store.users.findByUsername("alice@example.com");
  const client = await store.clients.findByClientId("dk-web");
  await store.tokens.revokeUserClient(alice!.id, client!.id, 20);
  const again = await store.imports.apply(input(withNewToken("c".repeat(64))));
  assert.deepEqual([again.tokens, again.consents, again.consentsRevoked], [{ imported: 0, skipped: 1, removed: 1, refused: 0 }, 0, 1]);
  assert.equal(await store.consents.find(alice!.id, client!.id), undefined);
  assert.equal(await store.tokens.findByHash("c".repeat(64)), undefined);
  assert.notEqual((await store.tokens.findByHash("b".repeat(64)))?.revokedAt, null);
});

storeTest("a re-run does not bring back a token purged since", async (store) => {
  await store.imports.apply(input());
  await store.purge(10_000, { retentionSeconds: 0, auditRetentionSeconds: 1e9 });
  assert.equal(await store.tokens.findByHash("b".repeat(64)), undefined, "the expired token was purged");
  const again = await store.imports.apply(input(withNewToken("c".repeat(64))));
  assert.deepEqual(again.tokens, { imported: 1, skipped: 0, removed: 1, refused: 0 });
  assert.equal(await store.tokens.findByHash("b".repeat(64)), undefined);
});

storeTest("a person already here before the first import is recorded by it, so a later delete holds", async (store) => {
  await store.users.insertMember({ username: "alice@example.com", kind: "person", passwordHash: "kept", now: 1 }, "home");
  await store.imports.apply(input());
  const alice = await store.users.findByUsername("alice@example.com");
  await store.users.erase(alice!.id, 20);
  const again = await store.imports.apply(input());
  assert.equal(again.owners.removed, 1);
  assert.equal(await store.users.findByUsername("alice@example.com"), undefined);
});
