// The code store's contract, on SQLite and PostgreSQL alike: a code opens a grant family, is stored only while what
// let the browser have it still holds, and is consumed once (tokens.exchangeCode).
import assert from "node:assert/strict";
import type { CodeBasis, Store } from "../../../src/store/contract.ts";
import { randomHash, rowsTest, storeCode, webClient } from "../../helpers/store_rows.ts";

const NOW = 1_000;

/**
 * Consumes a code the way the token endpoint does (tokens.exchangeCode) for the client with row id `clientId`,
 * issuing nothing (decide refuses). Only the row id matters to the consume; the rest only to what decide is told.
 */
function consume(store: Store, hash: string, now: number, clientId: number) {
  const client = { id: clientId, clientId: "", secretHash: "", grantType: "authorization_code" as const, scope: "", integrationUserId: null, requireDpop: false };
  return store.tokens.exchangeCode(hash, client, now, () => ({ refuse: "test" }));
}

rowsTest("codes.issue stores only the digest and opens a grant family", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  const codeHash = randomHash();
  await store.codes.issue({
    codeHash, familyId: "family-1", clientId: client.id, userId, redirectUri: "https://web.example/cb", scope: "fields:read",
    codeChallenge: "c".repeat(43), issuedAt: NOW, expiresAt: NOW + 600,
  });
  const result = await consume(store, codeHash, NOW + 1, client.id);
  assert.equal(result.status, "refused");
  if (result.status !== "refused") return;
  assert.deepEqual(result.code, {
    id: result.code.id, familyId: "family-1", clientId: client.id, userId, redirectUri: "https://web.example/cb",
    scope: "fields:read", codeChallenge: "c".repeat(43), codeChallengeMethod: "S256", issuedAt: NOW, expiresAt: NOW + 600,
    usedAt: NOW + 1, dpopJkt: null,
  });
  // The family is open: tokens may be issued into it.
  assert.equal(await store.tokens.issue({ clientId: client.id, userId, familyId: "family-1", tokens: [] }), "issued");
});

rowsTest("exchangeCode: a second consume reports reused and revokes the family's tokens", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  const { codeHash, familyId } = await storeCode(store, { client, userId, now: NOW });
  assert.equal((await consume(store, codeHash, NOW, client.id)).status, "refused");
  const tokenHash = randomHash();
  const token = { tokenHash, kind: "access" as const, grantType: "authorization_code" as const, scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 10 };
  assert.equal(await store.tokens.issue({ clientId: client.id, userId, familyId, tokens: [token] }), "issued");
  const second = await consume(store, codeHash, NOW, client.id);
  assert.equal(second.status, "reused");
  assert.equal(await store.tokens.findActiveAccess(tokenHash, NOW), undefined);
  // Nothing more can be issued into a revoked family.
  assert.equal(await store.tokens.issue({ clientId: client.id, userId, familyId, tokens: [] }), "family_revoked");
});

rowsTest("exchangeCode: of three concurrent consumes exactly one wins", async (store, rows) => {
  const client = await webClient(store);
  const { codeHash } = await storeCode(store, { client, userId: await rows.user(), now: NOW });
  const results = await Promise.all([1, 2, 3].map(() => consume(store, codeHash, NOW, client.id)));
  assert.deepEqual(results.map((r) => r.status).sort(), ["refused", "reused", "reused"]);
});

rowsTest("exchangeCode: another client's consume finds nothing, spends nothing and revokes nothing", async (store, rows) => {
  const client = await webClient(store);
  const other = await webClient(store, "other");
  const { codeHash } = await storeCode(store, { client, userId: await rows.user(), now: NOW });
  assert.deepEqual(await consume(store, codeHash, NOW, other.id), { status: "missing" });
  assert.equal((await consume(store, codeHash, NOW, client.id)).status, "refused");
  assert.deepEqual(await consume(store, codeHash, NOW, other.id), { status: "missing" });
  // The owner's replay is still detected: the other client's attempts did not stand in for it.
  assert.equal((await consume(store, codeHash, NOW, client.id)).status, "reused");
});

rowsTest("exchangeCode reports an unknown code as missing", async (store) => {
  assert.deepEqual(await consume(store, randomHash(), 0, 1), { status: "missing" });
});

/** A code for `basis`, issued with it; true when it was stored (consuming it then finds it). */
async function issueWithBasis(store: Store, code: { clientId: number; userId: number; scope?: string }, basis: CodeBasis) {
  const codeHash = randomHash();
  const stored = await store.codes.issue({
    codeHash, familyId: randomHash().slice(0, 22), clientId: code.clientId, userId: code.userId, redirectUri: "https://web.example/cb",
    scope: code.scope ?? "fields:read", codeChallenge: null, issuedAt: basis.now, expiresAt: basis.now + 600,
  }, basis);
  const consumed = await consume(store, codeHash, basis.now, code.clientId);
  assert.equal(consumed.status, stored ? "refused" : "missing");
  return stored;
}

rowsTest("codes.issue with a basis stores the code only while the session, user and client hold", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  await rows.session(userId, "live", NOW + 60);
  await rows.session(userId, "expired", NOW);
  const basis = { sessionHash: "live", clientId: client.clientId, now: NOW, consent: "given" } as const;
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, basis), true);
  assert.equal(await rows.consentScope(userId, client.id), "fields:read");
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, { ...basis, sessionHash: "expired" }), false);
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, { ...basis, sessionHash: "unknown" }), false);
  // The client row the request named: a client_id that no longer goes with the row id stores nothing.
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, { ...basis, clientId: "other" }), false);
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId: await rows.user() }, basis), false);
  await store.clients.setDisabled(client.clientId, true);
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, basis), false);
  await store.clients.setDisabled(client.clientId, false);
  await rows.setUserDisabled(userId, true);
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, basis), false);
});

rowsTest("codes.issue with a remembered consent stores the code only while that consent holds its scope", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  await rows.session(userId, "live", NOW + 60);
  const basis = { sessionHash: "live", clientId: client.clientId, now: NOW, consent: "remembered" } as const;
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, basis), false);
  await rows.consent(userId, client.id, "fields:read");
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId }, basis), true);
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId, scope: "fields:read fields:write" }, basis), false);
  // A given consent replaces the remembered one.
  assert.equal(await issueWithBasis(store, { clientId: client.id, userId, scope: "fields:write" }, { ...basis, consent: "given" }), true);
  assert.equal(await rows.consentScope(userId, client.id), "fields:write");
});

rowsTest("codes keep the DPoP key thumbprint the authorization request bound them to (RFC 9449 §10)", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  const codeHash = randomHash();
  await store.codes.issue({
    codeHash, familyId: "family-j", clientId: client.id, userId, redirectUri: "https://web.example/cb", scope: "fields:read",
    codeChallenge: null, dpopJkt: "j".repeat(43), issuedAt: NOW, expiresAt: NOW + 600,
  });
  const result = await consume(store, codeHash, NOW + 1, client.id);
  assert.equal(result.status === "refused" && result.code.dpopJkt, "j".repeat(43));
});
