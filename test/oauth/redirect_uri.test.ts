// Redirect URI matching: exact string comparison for every client, loopback included (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { redirectUriMatches } from "../../src/oauth/redirect_uri.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";
import { makeVerifier } from "../helpers/codes.ts";
import { sha256Base64Url } from "../../src/crypto/hash.ts";

const cases: Array<{ name: string; registered: string; presented: string; matches: boolean }> = [
  { name: "the same https URI", registered: "https://client.example/cb", presented: "https://client.example/cb", matches: true },
  { name: "the same loopback URI", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb", matches: true },
  { name: "https on another port", registered: "https://client.example/cb", presented: "https://client.example:8443/cb", matches: false },
  { name: "127.0.0.1 on another port", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:50123/cb", matches: false },
  { name: "127.0.0.1 without a port when one was registered", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1/cb", matches: false },
  { name: "127.0.0.1 with a port when none was registered", registered: "http://127.0.0.1/cb", presented: "http://127.0.0.1:50123/cb", matches: false },
  { name: "[::1] on another port", registered: "http://[::1]:9876/cb?app=1", presented: "http://[::1]:1234/cb?app=1", matches: false },
  { name: "localhost on another port", registered: "http://localhost:3000/cb", presented: "http://localhost:4000/cb", matches: false },
  { name: "loopback with another path", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb2", matches: false },
  { name: "loopback with another query", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb?x=1", matches: false },
  { name: "loopback switched to another loopback host", registered: "http://127.0.0.1:9876/cb", presented: "http://localhost:9876/cb", matches: false },
  { name: "loopback over https when http was registered", registered: "http://127.0.0.1:9876/cb", presented: "https://127.0.0.1:9876/cb", matches: false },
  { name: "loopback with user information", registered: "http://127.0.0.1:9876/cb", presented: "http://evil@127.0.0.1:9876/cb", matches: false },
  { name: "loopback in another spelling of the same URL", registered: "http://127.0.0.1:9876/cb", presented: "HTTP://127.0.0.1:9876/cb", matches: false },
  { name: "loopback with a fragment", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb#x", matches: false },
  { name: "garbage", registered: "http://127.0.0.1:9876/cb", presented: "not a url", matches: false },
];

for (const row of cases) {
  test(`redirectUriMatches: ${row.name} ${row.matches ? "matches" : "does not match"}`, () => {
    assert.equal(redirectUriMatches(row.registered, row.presented), row.matches);
  });
}

/** A signed-in browser and a client registered with `redirectUri`. */
async function loopbackClient(redirectUri: string, env: Record<string, string> = {}) {
  const t = await openTestApp(env);
  const { clientId, clientSecret } = await t.seed.client({ redirectUri });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  return { t, browser, clientId, clientSecret };
}

/** Approves the consent page `path` shows; returns the redirect's URL. */
async function approve(browser: TestBrowser, path: string): Promise<URL> {
  const consent = await browser.get(path);
  assert.equal(consent.status, 200, "the consent page");
  const approved = await browser.post("/oauth/authorize", { ...formFields(await consent.text(), "/oauth/authorize"), decision: "approve" });
  assert.equal(approved.status, 303);
  return new URL(approved.headers.get("location") ?? "");
}

function exchange(t: TestApp, body: Record<string, string>): Promise<Response> {
  return t.app.fetch(postJson("/oauth/token", { grant_type: "authorization_code", ...body }));
}

// The spec's §4.1 request: client_id, response_type, redirect_uri, scope (and state), no PKCE.
for (const registered of ["http://localhost:3000/callback", "http://127.0.0.1:53682/cb", "http://[::1]:8400/cb"]) {
  test(`a client registered with ${registered} gets a code for the spec's request without PKCE, and exchanges it`, async () => {
    const { t, browser, clientId, clientSecret } = await loopbackClient(registered);
    assert.equal(t.config.requirePkce, false);
    const location = await approve(browser, authorizePath(clientId, { redirect_uri: registered, state: "s-1" }));
    assert.equal(location.origin + location.pathname, registered);
    assert.equal(location.searchParams.get("error"), null);
    assert.equal(location.searchParams.get("state"), "s-1");
    const code = location.searchParams.get("code") ?? "";
    const res = await exchange(t, { code, redirect_uri: registered, client_id: clientId, client_secret: clientSecret });
    assert.equal(res.status, 200);
    const issued = (await res.json()) as { access_token: string; refresh_token: string };
    assert.match(issued.access_token, /^fgat_/);
    // The refresh grant checks a redirect_uri it is sent against the registration the same way.
    const refreshed = await t.app.fetch(postJson("/oauth/token", {
      grant_type: "refresh_token", refresh_token: issued.refresh_token, redirect_uri: registered, client_id: clientId, client_secret: clientSecret,
    }));
    assert.equal(refreshed.status, 200);
  });
}

const PORT_ONLY: Array<{ registered: string; presented: string }> = [
  { registered: "http://localhost:3000/callback", presented: "http://localhost:3001/callback" },
  { registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:50123/cb" },
  { registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1/cb" },
  { registered: "http://[::1]:8400/cb", presented: "http://[::1]:8401/cb" },
  { registered: "https://client.example/cb", presented: "https://client.example:8443/cb" },
];

for (const { registered, presented } of PORT_ONLY) {
  test(`authorize: ${presented} for a client registered with ${registered} is the 400 page, with no Location`, async () => {
    const { browser, clientId } = await loopbackClient(registered);
    const pkce = { code_challenge: await sha256Base64Url(makeVerifier()), code_challenge_method: "S256" };
    for (const extra of [{}, pkce]) {
      const res = await browser.get(authorizePath(clientId, { redirect_uri: presented, ...extra }));
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("location"), null);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(await res.text(), /redirect_uri does not match/);
    }
  });
}

test("the refresh grant refuses a loopback redirect_uri on another port", async () => {
  const registered = "http://127.0.0.1:9876/cb";
  const { t, browser, clientId, clientSecret } = await loopbackClient(registered);
  const code = (await approve(browser, authorizePath(clientId, { redirect_uri: registered }))).searchParams.get("code") ?? "";
  const issued = (await (await exchange(t, { code, redirect_uri: registered, client_id: clientId, client_secret: clientSecret })).json()) as {
    refresh_token: string;
  };
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token", refresh_token: issued.refresh_token, redirect_uri: "http://127.0.0.1:50123/cb", client_id: clientId, client_secret: clientSecret,
  }));
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, "invalid_grant");
});

test("with FIELDGATE_REQUIRE_PKCE a loopback client's request without PKCE is refused at its redirect URI", async () => {
  const registered = "http://localhost:3000/callback";
  const { browser, clientId } = await loopbackClient(registered, { FIELDGATE_REQUIRE_PKCE: "true" });
  const res = await browser.get(authorizePath(clientId, { redirect_uri: registered }));
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get("location") ?? "");
  assert.equal(location.origin + location.pathname, registered);
  assert.equal(location.searchParams.get("error"), "invalid_request");
  assert.equal(location.searchParams.get("code"), null);
});

test("a loopback client that sends PKCE must complete it: the code exchange without the verifier is refused", async () => {
  const registered = "http://127.0.0.1:9876/cb";
  const { t, browser, clientId, clientSecret } = await loopbackClient(registered);
  const verifier = makeVerifier();
  const pkce = { code_challenge: await sha256Base64Url(verifier), code_challenge_method: "S256" };
  const code = (await approve(browser, authorizePath(clientId, { redirect_uri: registered, ...pkce }))).searchParams.get("code") ?? "";
  const res = await exchange(t, { code, redirect_uri: registered, client_id: clientId, client_secret: clientSecret });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, "invalid_grant");
});

test("a loopback client's plain PKCE challenge is refused at its redirect URI (S256 only)", async () => {
  const registered = "http://127.0.0.1:9876/cb";
  const { browser, clientId } = await loopbackClient(registered);
  const res = await browser.get(authorizePath(clientId, { redirect_uri: registered, code_challenge: makeVerifier(), code_challenge_method: "plain" }));
  assert.equal(res.status, 302);
  assert.equal(new URL(res.headers.get("location") ?? "").searchParams.get("error"), "invalid_request");
});

test("a loopback client's earlier approval is not reused: every request shows the consent page (RFC 8252 §8.6)", async () => {
  const registered = "http://127.0.0.1:9876/callback";
  const { browser, clientId } = await loopbackClient(registered);
  await approve(browser, authorizePath(clientId, { redirect_uri: registered }));
  const again = await browser.get(authorizePath(clientId, { redirect_uri: registered }));
  assert.equal(again.status, 200, "consent page, not a silent redirect with a code");
  assert.equal(again.headers.get("location"), null);
  assert.match(await again.text(), /Approve/);
});
