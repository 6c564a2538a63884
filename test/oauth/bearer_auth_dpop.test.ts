// DPoP-bound tokens at the protected resources (RFC 9449 §7): /graphql and /oauth/token/info through app.fetch.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { ccRequest } from "../helpers/codes.ts";
import { BAD_PROOFS, makeProof, proofKey, type ProofKey } from "../helpers/dpop.ts";

const GRAPHQL = "http://fieldgate.test/graphql";
const CHALLENGE = 'DPoP error="invalid_dpop_proof", algs="ES256 EdDSA Ed25519"';

/** A world with one client-credentials client holding a DPoP token bound to `key`. */
async function boundToken(): Promise<{ t: TestApp; client: SeededClient; key: ProofKey; token: string; bearer: string }> {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const key = await proofKey();
  const proof = await makeProof(key, { htu: "http://fieldgate.test/oauth/token", iat: t.clock.nowSeconds() });
  const request = ccRequest(client);
  request.headers.set("dpop", proof);
  const body = await (await t.app.fetch(request)).json();
  assert.equal(body.token_type, "DPoP");
  const bearer = (await (await t.app.fetch(ccRequest(client))).json()).access_token;
  return { t, client, key, token: body.access_token, bearer };
}

function graphql(authorization: string, proof?: string, url = GRAPHQL): Request {
  const headers: Record<string, string> = { authorization, "content-type": "application/json" };
  if (proof !== undefined) headers.dpop = proof;
  return new Request(url, { method: "POST", headers, body: JSON.stringify({ query: "{ __typename }" }) });
}

function goodProof(w: { t: TestApp; key: ProofKey; token: string }, extra: { jti?: string; url?: string } = {}) {
  return makeProof(w.key, { htm: "POST", htu: extra.url ?? GRAPHQL, iat: w.t.clock.nowSeconds(), accessToken: w.token, jti: extra.jti });
}

test("a DPoP token with a fresh proof of its key reads /graphql", async () => {
  const w = await boundToken();
  const res = await w.t.app.fetch(graphql(`DPoP ${w.token}`, await goodProof(w)));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { data: { __typename: "Query" } });
});

test("/oauth/token/info accepts a DPoP token with a proof for its own URL", async () => {
  const w = await boundToken();
  const url = "http://fieldgate.test/oauth/token/info";
  const proof = await makeProof(w.key, { htm: "GET", htu: url, iat: w.t.clock.nowSeconds(), accessToken: w.token });
  const res = await w.t.app.fetch(new Request(url, { headers: { authorization: `DPoP ${w.token}`, dpop: proof } }));
  assert.equal(res.status, 200);
});

interface Row {
  name: string;
  request: (w: Awaited<ReturnType<typeof boundToken>>) => Promise<Request>;
  challenge: string;
}

const ROWS: Row[] = [
  { name: "a bound token sent as Bearer", request: async (w) => graphql(`Bearer ${w.token}`), challenge: CHALLENGE },
  { name: "a DPoP token without a proof", request: async (w) => graphql(`DPoP ${w.token}`), challenge: CHALLENGE },
  {
    name: "a proof by another key",
    request: async (w) => graphql(`DPoP ${w.token}`, await goodProof({ ...w, key: await proofKey() })),
    challenge: CHALLENGE,
  },
  {
    name: "a proof without ath",
    request: async (w) => graphql(`DPoP ${w.token}`, await makeProof(w.key, { htu: GRAPHQL, iat: w.t.clock.nowSeconds() })),
    challenge: CHALLENGE,
  },
  {
    name: "a proof whose ath hashes another token",
    request: async (w) => graphql(`DPoP ${w.token}`, await goodProof({ ...w, token: w.bearer })),
    challenge: CHALLENGE,
  },
  {
    name: "a replayed proof",
    request: async (w) => {
      const proof = await goodProof(w);
      assert.equal((await w.t.app.fetch(graphql(`DPoP ${w.token}`, proof))).status, 200);
      return graphql(`DPoP ${w.token}`, proof);
    },
    challenge: CHALLENGE,
  },
  {
    name: "an unknown token with the DPoP scheme",
    request: async (w) => graphql("DPoP fgat_unknown", await goodProof({ ...w, token: "fgat_unknown" })),
    challenge: 'DPoP error="invalid_token", algs="ES256 EdDSA Ed25519"',
  },
  {
    name: "a Bearer (unbound) token with the DPoP scheme",
    request: async (w) => graphql(`DPoP ${w.bearer}`, await goodProof({ ...w, token: w.bearer })),
    challenge: 'DPoP error="invalid_token", algs="ES256 EdDSA Ed25519"',
  },
  ...BAD_PROOFS.map((bad): Row => ({
    name: `a proof with ${bad.name}`,
    request: async (w) =>
      graphql(`DPoP ${w.token}`, await bad.proof(w.key, { htm: "POST", htu: GRAPHQL, iat: w.t.clock.nowSeconds(), accessToken: w.token })),
    challenge: CHALLENGE,
  })),
];

for (const row of ROWS) {
  test(`/graphql refuses ${row.name}: 401 with a DPoP challenge`, async () => {
    const w = await boundToken();
    const res = await w.t.app.fetch(await row.request(w));
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), row.challenge);
    assert.ok(!(await res.text()).includes(w.token), "the token is not echoed");
  });
}

test("a malformed DPoP authorization header is 400 invalid_request, not a 500", async () => {
  const w = await boundToken();
  const res = await w.t.app.fetch(graphql("DPoP a b c", await goodProof(w)));
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("www-authenticate"), 'DPoP error="invalid_request", algs="ES256 EdDSA Ed25519"');
});

test("a Bearer token keeps working exactly as before beside DPoP tokens", async () => {
  const w = await boundToken();
  const res = await w.t.app.fetch(graphql(`Bearer ${w.bearer}`));
  assert.equal(res.status, 200);
  const unknown = await w.t.app.fetch(graphql("Bearer fgat_unknown"));
  assert.equal(unknown.headers.get("www-authenticate"), 'Bearer realm="fieldgate", error="invalid_token"');
});

test("introspection and token info say a bound token is DPoP with its key's thumbprint in cnf.jkt", async () => {
  const w = await boundToken();
  const { calculateJwkThumbprint } = await import("jose");
  const jkt = await calculateJwkThumbprint(w.key.publicJwk);
  const url = "http://fieldgate.test/oauth/token/info";
  const proof = await makeProof(w.key, { htm: "GET", htu: url, iat: w.t.clock.nowSeconds(), accessToken: w.token });
  const info = await (await w.t.app.fetch(new Request(url, { headers: { authorization: `DPoP ${w.token}`, dpop: proof } }))).json();
  assert.equal(info.token_type, "DPoP");
  assert.deepEqual(info.cnf, { jkt });
  const bearerInfo = await (await w.t.app.fetch(new Request(url, { headers: { authorization: `Bearer ${w.bearer}` } }))).json();
  assert.equal("cnf" in bearerInfo || "token_type" in bearerInfo, false, "a Bearer token's answer is unchanged");
  const introspect = (token: string) =>
    w.t.app.fetch(postJson("/oauth/introspect", { token, client_id: w.client.clientId, client_secret: w.client.clientSecret }));
  const introspected = await (await introspect(w.token)).json();
  assert.equal(introspected.token_type, "DPoP");
  assert.deepEqual(introspected.cnf, { jkt });
  const bearer = await (await introspect(w.bearer)).json();
  assert.equal(bearer.token_type, "Bearer");
  assert.equal("cnf" in bearer, false);
});
