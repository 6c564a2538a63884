// Server DPoP nonces (RFC 9449 §8, §9): stateless, shared through the store, off unless FIELDGATE_DPOP_NONCE is on.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createDpopNonces } from "../../src/oauth/dpop_nonce.ts";
import { isOAuthError } from "../../src/oauth/errors.ts";
import { loadConfig } from "../../src/config.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import { fakeClock, seededRandom } from "../helpers/fake_clock.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { ccRequest } from "../helpers/codes.ts";
import { makeProof, proofKey, type ProofKey } from "../helpers/dpop.ts";

const config = loadConfig({ FIELDGATE_DPOP_WINDOW: "60" });

function nonces() {
  const store = openStore(":memory:");
  const clock = fakeClock();
  const make = () => createDpopNonces({ store, clock: clock.clock, random: seededRandom(1), config });
  return { store, clock, make };
}

async function refusedNonce(promise: Promise<void>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (isOAuthError(error) && error.code === "use_dpop_nonce") return error.headers["dpop-nonce"];
    throw error;
  }
}

test("a nonce is accepted by every app on the store in its time step and the next, then refused with a fresh one", async () => {
  const { store, clock, make } = nonces();
  try {
    const one = make();
    const nonce = await one.current();
    assert.equal(await refusedNonce(make().check(nonce)), undefined, "another app on the same store accepts it");
    clock.advance(60);
    assert.equal(await refusedNonce(one.check(nonce)), undefined, "one step later");
    clock.advance(60);
    const fresh = await refusedNonce(one.check(nonce));
    assert.equal(fresh, await one.current(), "two steps later: refused, with the current nonce");
    assert.notEqual(fresh, nonce);
  } finally {
    await store.close();
  }
});

const BAD_NONCES: { name: string; nonce: (good: string) => unknown }[] = [
  { name: "missing", nonce: () => undefined },
  { name: "not a string", nonce: () => 42 },
  { name: "forged MAC", nonce: (good) => `${good.split(".")[0]}.${"A".repeat(43)}` },
  { name: "a future step", nonce: (good) => `${Number(good.split(".")[0]) + 1}.${good.split(".")[1]}` },
  { name: "garbage", nonce: () => "x".repeat(5_000) },
];

for (const row of BAD_NONCES) {
  test(`a ${row.name} nonce is refused with use_dpop_nonce and a current one`, async () => {
    const { store, make } = nonces();
    try {
      const app = make();
      const good = await app.current();
      assert.equal(await refusedNonce(app.check(row.nonce(good))), good);
    } finally {
      await store.close();
    }
  });
}

async function nonceApp(): Promise<{ t: TestApp; key: ProofKey }> {
  return { t: await openTestApp({ FIELDGATE_DPOP_NONCE: "true" }), key: await proofKey() };
}

test("with nonces on, the token endpoint answers a proof without one with 400 use_dpop_nonce and DPoP-Nonce; the retry succeeds", async () => {
  const { t, key } = await nonceApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const send = async (nonce?: string) => {
    const request = ccRequest(client);
    const claims = nonce === undefined ? {} : { nonce };
    request.headers.set("dpop", await makeProof(key, { htu: "http://fieldgate.test/oauth/token", iat: t.clock.nowSeconds(), claims }));
    return t.app.fetch(request);
  };
  const first = await send();
  assert.equal(first.status, 400);
  assert.equal((await first.json()).error, "use_dpop_nonce");
  const nonce = first.headers.get("dpop-nonce");
  assert.ok(nonce);
  const retry = await send(nonce);
  assert.equal(retry.status, 200);
  assert.equal((await retry.json()).token_type, "DPoP");
});

test("with nonces on, /graphql answers a proof without one with 401, a use_dpop_nonce challenge and DPoP-Nonce", async () => {
  const { t, key } = await nonceApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const issue = ccRequest(client);
  const tokenUrl = "http://fieldgate.test/oauth/token";
  const nonce = (await t.app.fetch(withDpop(issue.clone(), await makeProof(key, { htu: tokenUrl, iat: t.clock.nowSeconds() })))).headers.get("dpop-nonce")!;
  const proof = await makeProof(key, { htu: tokenUrl, iat: t.clock.nowSeconds(), claims: { nonce } });
  const accessToken = (await (await t.app.fetch(withDpop(issue, proof))).json()).access_token;
  const graphql = "http://fieldgate.test/graphql";
  const res = await t.app.fetch(new Request(graphql, {
    method: "POST",
    headers: {
      authorization: `DPoP ${accessToken}`,
      "content-type": "application/json",
      dpop: await makeProof(key, { htu: graphql, iat: t.clock.nowSeconds(), accessToken }),
    },
    body: JSON.stringify({ query: "{ __typename }" }),
  }));
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("www-authenticate"), 'DPoP error="use_dpop_nonce", algs="ES256 EdDSA Ed25519"');
  assert.equal(res.headers.get("dpop-nonce"), nonce);
});

function withDpop(request: Request, proof: string): Request {
  request.headers.set("dpop", proof);
  return request;
}
