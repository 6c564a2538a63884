// DPoP at the token endpoint (RFC 9449 §5): bound tokens for each grant, Bearer unchanged, every bad proof a 400.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { calculateJwkThumbprint } from "jose";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";
import { authCodeTokens, ccRequest, codeBody, issueCode, refreshBody } from "../helpers/codes.ts";
import { BAD_PROOFS, makeProof, proofKey, type ProofKey } from "../helpers/dpop.ts";

const TOKEN_URL = "http://fieldgate.test/oauth/token";

/** `request` with a DPoP header added. */
function withProof(request: Request, proof: string): Request {
  const headers = new Headers(request.headers);
  headers.set("dpop", proof);
  return new Request(request, { headers });
}

function proofFor(t: TestApp, key: ProofKey, jti?: string) {
  return makeProof(key, { htm: "POST", htu: TOKEN_URL, iat: t.clock.nowSeconds(), jti });
}

async function storedJkt(t: TestApp, accessToken: string): Promise<string | null | undefined> {
  return (await t.store.tokens.findByHash(await tokenKey({ digest: sha256Hex }, accessToken)))?.dpopJkt;
}

test("client_credentials with a proof issues a DPoP token bound to the proof's key, in the Bearer answer's shape", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const key = await proofKey();
  const res = await t.app.fetch(withProof(ccRequest(client), await proofFor(t, key)));
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ["access_token", "token_type", "expires_in", "scope", "created_at"]);
  assert.equal(body.token_type, "DPoP");
  assert.equal(await storedJkt(t, body.access_token), await calculateJwkThumbprint(key.publicJwk));
});

test("a token request without a proof still gets a Bearer token, bound to nothing", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const body = await (await t.app.fetch(ccRequest(client))).json();
  assert.equal(body.token_type, "Bearer");
  assert.equal(await storedJkt(t, body.access_token), null);
});

test("a code exchange with a proof binds the access token, not the refresh token; each refresh's proof binds the new access token", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const first = await proofKey();
  const res = await t.app.fetch(withProof(postJson("/oauth/token", codeBody(client, issued)), await proofFor(t, first)));
  const pair = await res.json();
  assert.equal(pair.token_type, "DPoP");
  assert.equal(await storedJkt(t, pair.access_token), await calculateJwkThumbprint(first.publicJwk));
  assert.equal(await storedJkt(t, pair.refresh_token), null);

  const second = await proofKey("EdDSA");
  const refreshed = await (await t.app.fetch(
    withProof(postJson("/oauth/token", refreshBody(client, pair.refresh_token)), await proofFor(t, second)),
  )).json();
  assert.equal(refreshed.token_type, "DPoP");
  assert.equal(await storedJkt(t, refreshed.access_token), await calculateJwkThumbprint(second.publicJwk));

  const bearer = await (await t.app.fetch(postJson("/oauth/token", refreshBody(client, refreshed.refresh_token)))).json();
  assert.equal(bearer.token_type, "Bearer", "a refresh without a proof gets a Bearer token");
});

test("a proof is accepted once: the same proof again is refused with invalid_dpop_proof", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const proof = await proofFor(t, await proofKey());
  assert.equal((await t.app.fetch(withProof(ccRequest(client), proof))).status, 200);
  const again = await t.app.fetch(withProof(ccRequest(client), proof));
  assert.equal(again.status, 400);
  assert.equal((await again.json()).error, "invalid_dpop_proof");
});

test("a refresh token bound by nothing can be refreshed with a proof of any key", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const res = await t.app.fetch(withProof(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)), await proofFor(t, await proofKey())));
  assert.equal((await res.json()).token_type, "DPoP");
});

for (const row of BAD_PROOFS) {
  test(`token refuses a DPoP proof with ${row.name}: 400 invalid_dpop_proof, nothing issued`, async () => {
    const t = await openTestApp();
    const client = await t.seed.client({ grant: "client_credentials" });
    const proof = await row.proof(await proofKey(), { htm: "POST", htu: TOKEN_URL, iat: t.clock.nowSeconds() });
    const res = await t.app.fetch(withProof(ccRequest(client), proof));
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const body = await res.json();
    assert.equal(body.error, "invalid_dpop_proof");
    assert.ok(!JSON.stringify(body).includes(proof), "the proof is not echoed");
    assert.equal(await t.store.tokens.count(), 0, "no token was issued");
  });
}

test("a client registered to require DPoP is refused a token without a proof, and gets a DPoP token with one", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  await t.store.clients.setRequireDpop(client.clientId, true);
  const refused = await t.app.fetch(ccRequest(client));
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).error, "invalid_dpop_proof");
  assert.equal(await t.store.tokens.count(), 0);
  const res = await t.app.fetch(withProof(ccRequest(client), await proofFor(t, await proofKey())));
  assert.equal((await res.json()).token_type, "DPoP");
});
