// DPoP proof checks (RFC 9449 §4.3): one row per way a proof can be wrong, and malformed input as a property.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { exportJWK, SignJWT } from "jose";
import { readDpopHeader, verifyDpopProof, type DpopExpectation } from "../../src/oauth/dpop.ts";
import { isOAuthError } from "../../src/oauth/errors.ts";
import { makeProof, proofKey, unsignedProof, type ProofKey, type ProofOptions } from "../helpers/dpop.ts";

const NOW = 1_700_000_000;
const EXPECTED: DpopExpectation = { method: "POST", url: "http://test/oauth/token", now: NOW, windowSeconds: 60 };

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isOAuthError(error)) return error.code;
    throw error;
  }
  return "accepted";
}

test("a well-formed ES256 proof yields its key's RFC 7638 thumbprint and its jti", async () => {
  const key = await proofKey("ES256");
  const checked = await verifyDpopProof(await makeProof(key, { jti: "j1" }), EXPECTED);
  // RFC 7638 §3: SHA-256 of the required members in lexicographic order, no spaces.
  const { crv, kty, x, y } = key.publicJwk;
  const { createHash } = await import("node:crypto");
  const expected = createHash("sha256").update(JSON.stringify({ crv, kty, x, y })).digest("base64url");
  assert.deepEqual(checked, { jkt: expected, jti: "j1", iat: NOW, nonce: undefined });
});

test("an EdDSA (Ed25519) proof is accepted, and htu is compared without query and fragment", async () => {
  const key = await proofKey("EdDSA");
  const proof = await makeProof(key, { htu: "HTTP://TEST:80/oauth/token?x=1#frag" });
  assert.equal((await verifyDpopProof(proof, EXPECTED)).iat, NOW);
});

test("a proof at a resource must carry the access token's hash", async () => {
  const key = await proofKey();
  const at = { ...EXPECTED, method: "GET", url: "http://test/graphql", accessToken: "tok" };
  const base = { htm: "GET", htu: "http://test/graphql" };
  assert.equal(await refusal(verifyDpopProof(await makeProof(key, { ...base, accessToken: "tok" }), at)), "accepted");
  assert.equal(await refusal(verifyDpopProof(await makeProof(key, base), at)), "invalid_dpop_proof");
  const wrong = await makeProof(key, { ...base, accessToken: "other" });
  assert.equal(await refusal(verifyDpopProof(wrong, at)), "invalid_dpop_proof");
});

interface Row {
  name: string;
  proof: (key: ProofKey) => Promise<string> | string;
}

const signed = (options: ProofOptions) => (key: ProofKey) => makeProof(key, options);

const ROWS: Row[] = [
  { name: "wrong typ", proof: signed({ header: { typ: "JWT" } }) },
  { name: "no typ", proof: signed({ header: { typ: undefined } }) },
  { name: "alg none", proof: (key) => unsignedProof(key, { jti: "a", htm: "POST", htu: EXPECTED.url, iat: NOW }) },
  {
    name: "HS256 (a symmetric algorithm)",
    proof: (key) =>
      new SignJWT({ jti: "a", htm: "POST", htu: EXPECTED.url, iat: NOW })
        .setProtectedHeader({ alg: "HS256", typ: "dpop+jwt", jwk: key.publicJwk })
        .sign(new Uint8Array(32)),
  },
  { name: "a private key in jwk", proof: async (key) => makeProof(key, { header: { jwk: await exportJWK(key.privateKey) } }) },
  { name: "no jwk", proof: signed({ header: { jwk: undefined } }) },
  { name: "another key's jwk", proof: async (key) => makeProof(key, { header: { jwk: (await proofKey()).publicJwk } }) },
  { name: "missing jti", proof: signed({ claims: { jti: undefined } }) },
  { name: "jti over 256 characters", proof: signed({ jti: "j".repeat(257) }) },
  { name: "missing htm", proof: signed({ claims: { htm: undefined } }) },
  { name: "missing htu", proof: signed({ claims: { htu: undefined } }) },
  { name: "missing iat", proof: signed({ claims: { iat: undefined } }) },
  { name: "htm mismatch", proof: signed({ htm: "GET" }) },
  { name: "htu mismatch (path)", proof: signed({ htu: "http://test/oauth/revoke" }) },
  { name: "htu mismatch (host)", proof: signed({ htu: "http://other/oauth/token" }) },
  { name: "htu not a URL", proof: signed({ htu: "/oauth/token" }) },
  { name: "iat too old", proof: signed({ iat: NOW - 61 }) },
  { name: "iat in the future", proof: signed({ iat: NOW + 61 }) },
  { name: "iat not a number", proof: signed({ claims: { iat: "1700000000" } }) },
  { name: "not a JWS", proof: () => "not.a.jws" },
  { name: "malformed base64", proof: () => "%%%.%%%.%%%" },
];

for (const row of ROWS) {
  test(`a proof is refused with invalid_dpop_proof: ${row.name}`, async () => {
    const key = await proofKey();
    assert.equal(await refusal(verifyDpopProof(await row.proof(key), EXPECTED)), "invalid_dpop_proof");
  });
}

test("the DPoP header is read once, bounded in length, and absent means no proof", () => {
  const request = (value?: string | string[]) => {
    const headers = new Headers();
    for (const v of [value ?? []].flat()) headers.append("dpop", v);
    return new Request("http://test/oauth/token", { method: "POST", headers });
  };
  assert.equal(readDpopHeader(request()), undefined);
  assert.equal(readDpopHeader(request("a.b.c")), "a.b.c");
  for (const bad of [["a.b.c", "d.e.f"], "x".repeat(4_097), "a.b c"]) {
    assert.throws(() => readDpopHeader(request(bad)), (e: unknown) => isOAuthError(e) && e.code === "invalid_dpop_proof");
  }
});

test("malformed proofs are only ever refused with invalid_dpop_proof, never another error", async () => {
  const key = await proofKey();
  const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
  const part = fc.oneof(fc.string(), fc.jsonValue().map(b64), fc.base64String(), fc.constant(b64({ alg: "ES256", typ: "dpop+jwt", jwk: key.publicJwk })));
  const proof = fc.oneof(fc.string(), fc.tuple(part, part, part).map((p) => p.join(".")));
  await fc.assert(
    fc.asyncProperty(proof, async (candidate) => {
      assert.equal(await refusal(verifyDpopProof(candidate, EXPECTED)), "invalid_dpop_proof");
    }),
    { numRuns: 300, seed: 37 },
  );
});

test("an Ed25519 proof under EdDSA's fully specified name (RFC 9864), as oauth4webapi signs, is accepted", async () => {
  const key = await proofKey("EdDSA");
  const proof = await makeProof(key, { header: { alg: "Ed25519" } });
  assert.equal((await verifyDpopProof(proof, EXPECTED)).iat, NOW);
});
