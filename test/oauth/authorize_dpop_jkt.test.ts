// dpop_jkt at /oauth/authorize (RFC 9449 §10): the code is bound to a key, and only a proof by that key exchanges it.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { calculateJwkThumbprint } from "jose";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { codeBody } from "../helpers/codes.ts";
import { postJson } from "../helpers/requests.ts";
import { makeProof, proofKey, type ProofKey } from "../helpers/dpop.ts";

interface Ready {
  t: TestApp;
  browser: TestBrowser;
  client: SeededClient;
  key: ProofKey;
  jkt: string;
}

async function signedIn(): Promise<Ready> {
  const t = await openTestApp();
  const client = await t.seed.client();
  const browser = testBrowser(t.app);
  assert.equal((await signIn(browser, await t.seed.user())).status, 303);
  const key = await proofKey();
  return { t, browser, client, key, jkt: await calculateJwkThumbprint(key.publicJwk) };
}

/** Approves a request naming `dpopJkt`; the code from the redirect. */
async function approvedCode(r: Ready, dpopJkt: string): Promise<string> {
  const page = await r.browser.get(authorizePath(r.client.clientId, { dpop_jkt: dpopJkt }));
  assert.equal(page.status, 200);
  const fields = formFields(await page.text(), "/oauth/authorize");
  assert.equal(fields.dpop_jkt, dpopJkt, "the consent form carries the binding");
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  return new URL(res.headers.get("location")!).searchParams.get("code")!;
}

async function exchange(r: Ready, code: string, key?: ProofKey): Promise<Response> {
  const request = postJson("/oauth/token", codeBody(r.client, { code, redirectUri: "https://client.example/cb", familyId: "", userId: 0 }));
  if (key) request.headers.set("dpop", await makeProof(key, { htu: "http://fieldgate.test/oauth/token", iat: r.t.clock.nowSeconds() }));
  return r.t.app.fetch(request);
}

test("a code bound with dpop_jkt is exchanged with a proof by that key for a DPoP token", async () => {
  const r = await signedIn();
  const res = await exchange(r, await approvedCode(r, r.jkt), r.key);
  assert.equal(res.status, 200);
  assert.equal((await res.json()).token_type, "DPoP");
});

const REFUSED: { name: string; key: (r: Ready) => Promise<ProofKey | undefined> }[] = [
  { name: "without a proof", key: async () => undefined },
  { name: "with a proof by another key", key: () => proofKey() },
];

for (const row of REFUSED) {
  test(`a code bound with dpop_jkt is refused ${row.name}: 400 invalid_dpop_proof, and the code is used up`, async () => {
    const r = await signedIn();
    const code = await approvedCode(r, r.jkt);
    const res = await exchange(r, code, await row.key(r));
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "invalid_dpop_proof");
    assert.equal((await exchange(r, code, r.key)).status, 400, "a failed exchange uses the code up");
  });
}

test("a malformed dpop_jkt is an invalid_request error redirect, and no code is issued", async () => {
  const r = await signedIn();
  const res = await r.browser.get(authorizePath(r.client.clientId, { dpop_jkt: "not a thumbprint" }));
  assert.equal(res.status, 302);
  const url = new URL(res.headers.get("location")!);
  assert.equal(url.searchParams.get("error"), "invalid_request");
  assert.equal(url.searchParams.get("code"), null);
});
