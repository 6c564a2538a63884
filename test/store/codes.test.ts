import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp, type TestApp } from "../helpers/test_app.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { issueCode } from "../helpers/codes.ts";

/**
 * Consumes a code the way the token endpoint does (tokens.exchangeCode) for the client with row id `clientId`,
 * issuing nothing (decide refuses). Only the row id matters to the consume; the rest only to what decide is told.
 */
function consume(t: TestApp, hash: string, now: number, clientId: number) {
  return t.store.tokens.exchangeCode(hash, { id: clientId, clientId: "", secretHash: "", grantType: "authorization_code", scope: "", integrationUserId: null }, now, () => ({ refuse: "test" }));
}

async function setup(t: TestApp, options: { verifier?: string } = {}) {
  const client = await t.seed.client();
  const issued = await issueCode(t, client, options);
  return { client, issued, hash: await sha256Hex(issued.code) };
}

test("codes.issue stores only the digest and opens a grant family", async () => {
  const t = buildTestApp();
  const { issued, hash, client } = await setup(t, { verifier: "v".repeat(43) });
  const result = await consume(t, hash, t.clock.nowSeconds(), client.client.id);
  assert.equal(result.status, "refused");
  if (result.status !== "refused") return;
  assert.equal(result.code.familyId, issued.familyId);
  assert.equal(result.code.clientId, client.client.id);
  assert.equal(result.code.codeChallengeMethod, "S256");
  assert.equal(result.code.usedAt, t.clock.nowSeconds());
  assert.equal((await consume(t, issued.code, t.clock.nowSeconds(), client.client.id)).status, "missing");
});

test("exchangeCode: a second consume reports reused and revokes the family's tokens", async () => {
  const t = buildTestApp();
  const { issued, hash, client } = await setup(t);
  const now = t.clock.nowSeconds();
  assert.equal((await consume(t, hash, now, client.client.id)).status, "refused");
  assert.equal(
    await t.store.tokens.issue({
      clientId: client.client.id,
      userId: issued.userId,
      familyId: issued.familyId,
      tokens: [{
        tokenHash: "a".repeat(64),
        kind: "access",
        grantType: "authorization_code",
        scope: "fields:read",
        issuedAt: now,
        expiresAt: now + 10,
      }],
    }),
    "issued",
  );
  const second = await consume(t, hash, now, client.client.id);
  assert.equal(second.status, "reused");
  assert.equal(await t.store.tokens.findActiveAccess("a".repeat(64), now), undefined);
  // Nothing more can be issued into a revoked family.
  assert.equal(
    await t.store.tokens.issue({
      clientId: client.client.id,
      userId: issued.userId,
      familyId: issued.familyId,
      tokens: [],
    }),
    "family_revoked",
  );
});

test("exchangeCode: of two concurrent consumes exactly one wins", async () => {
  const t = buildTestApp();
  const { hash, client } = await setup(t);
  const results = await Promise.all([1, 2, 3].map(() => consume(t, hash, t.clock.nowSeconds(), client.client.id)));
  assert.deepEqual(results.map((r) => r.status).sort(), ["refused", "reused", "reused"]);
});

test("exchangeCode: another client's consume finds nothing, spends nothing and revokes nothing", async () => {
  const t = buildTestApp();
  const { hash, client } = await setup(t);
  const other = await t.seed.client();
  const now = t.clock.nowSeconds();
  assert.deepEqual(await consume(t, hash, now, other.client.id), { status: "missing" });
  assert.equal((await consume(t, hash, now, client.client.id)).status, "refused");
  assert.deepEqual(await consume(t, hash, now, other.client.id), { status: "missing" });
  // The owner's replay is still detected: the other client's attempts did not stand in for it.
  assert.equal((await consume(t, hash, now, client.client.id)).status, "reused");
});

test("exchangeCode reports an unknown code as missing", async () => {
  const t = buildTestApp();
  assert.deepEqual(await consume(t, "f".repeat(64), 0, 1), { status: "missing" });
});
