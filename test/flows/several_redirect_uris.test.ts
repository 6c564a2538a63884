// A client with several registered redirect URIs: each one receives codes, nothing else does (RFC 6749 §3.1.2.2).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";

const URIS = ["https://client.example/cb", "https://client.example/second?tenant=7"];

async function approve(presented: string) {
  const t = await openTestApp();
  const { clientId, clientSecret } = await t.seed.client({ redirectUris: URIS });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const consent = await browser.get(authorizePath(clientId, { redirect_uri: presented }));
  return { t, browser, clientId, clientSecret, consent };
}

test("the second registered redirect URI receives the code, and the token request repeats it", async () => {
  const { t, browser, clientId, clientSecret, consent } = await approve(URIS[1]!);
  assert.equal(consent.status, 200);
  const approved = await browser.post("/oauth/authorize", { ...formFields(await consent.text(), "/oauth/authorize"), decision: "approve" });
  const location = new URL(approved.headers.get("location") ?? "");
  assert.equal(`${location.origin}${location.pathname}`, "https://client.example/second");
  assert.equal(location.searchParams.get("tenant"), "7");
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code", code: location.searchParams.get("code"), redirect_uri: URIS[1],
    client_id: clientId, client_secret: clientSecret,
  }));
  assert.equal(res.status, 200);
  const tokens = await res.json() as { refresh_token: string };
  // The refresh grant's optional redirect_uri may name any registered URI, and nothing else.
  const refreshed = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token", refresh_token: tokens.refresh_token, redirect_uri: URIS[0], client_id: clientId,
    client_secret: clientSecret,
  }));
  assert.equal(refreshed.status, 200);
});

for (const presented of ["https://client.example/cb/", "https://client.example/second", "https://client.example/cb\nhttps://client.example/second"]) {
  test(`a URI that is not exactly one of the registered ones gets the error page: ${JSON.stringify(presented)}`, async () => {
    const { consent } = await approve(presented);
    assert.equal(consent.status, 400);
    assert.equal(consent.headers.get("location"), null);
  });
}

test("the refresh grant refuses a redirect_uri that is not registered", async () => {
  const t = await openTestApp();
  const { clientId, clientSecret } = await t.seed.client({ redirectUris: URIS });
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token", refresh_token: "fgrt_unknown", redirect_uri: "https://evil.example/cb", client_id: clientId,
    client_secret: clientSecret,
  }));
  assert.equal(res.status, 400);
  assert.equal((await res.json() as { error: string }).error, "invalid_grant");
});
