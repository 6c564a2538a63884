// Redirect URI matching: exact, except the port of an http loopback URI (RFC 8252 §7.3, RFC 9700 §2.1).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { redirectUriMatches } from "../../src/oauth/redirect_uri.ts";
import { buildTestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";
import { makeVerifier } from "../helpers/codes.ts";
import { sha256Base64Url } from "../../src/crypto/hash.ts";

const cases: Array<{ name: string; registered: string; presented: string; matches: boolean }> = [
  { name: "the same https URI", registered: "https://client.example/cb", presented: "https://client.example/cb", matches: true },
  { name: "https on another port", registered: "https://client.example/cb", presented: "https://client.example:8443/cb", matches: false },
  { name: "127.0.0.1 on another port", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:50123/cb", matches: true },
  { name: "127.0.0.1 without a port when one was registered", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1/cb", matches: true },
  { name: "127.0.0.1 with a port when none was registered", registered: "http://127.0.0.1/cb", presented: "http://127.0.0.1:50123/cb", matches: true },
  { name: "[::1] on another port", registered: "http://[::1]:9876/cb?app=1", presented: "http://[::1]:1234/cb?app=1", matches: true },
  { name: "localhost on another port", registered: "http://localhost:3000/cb", presented: "http://localhost:4000/cb", matches: true },
  { name: "loopback with another path", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb2", matches: false },
  { name: "loopback with another query", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:9876/cb?x=1", matches: false },
  { name: "loopback switched to another loopback host", registered: "http://127.0.0.1:9876/cb", presented: "http://localhost:9876/cb", matches: false },
  { name: "loopback over https when http was registered", registered: "http://127.0.0.1:9876/cb", presented: "https://127.0.0.1:9876/cb", matches: false },
  { name: "loopback with user information", registered: "http://127.0.0.1:9876/cb", presented: "http://evil@127.0.0.1:9876/cb", matches: false },
  { name: "loopback not in the URL standard's form", registered: "http://127.0.0.1:9876/cb", presented: "HTTP://127.0.0.1:5000/cb", matches: false },
  { name: "loopback with a fragment", registered: "http://127.0.0.1:9876/cb", presented: "http://127.0.0.1:5000/cb#x", matches: false },
  { name: "a non-loopback http host on another port", registered: "http://127.0.0.2:9876/cb", presented: "http://127.0.0.2:5000/cb", matches: false },
  { name: "garbage", registered: "http://127.0.0.1:9876/cb", presented: "not a url", matches: false },
];

for (const row of cases) {
  test(`redirectUriMatches: ${row.name} ${row.matches ? "matches" : "does not match"}`, () => {
    assert.equal(redirectUriMatches(row.registered, row.presented), row.matches);
  });
}

const REGISTERED = "http://127.0.0.1:9876/callback";
const PRESENTED = "http://127.0.0.1:50123/callback";

async function approvedOnAnotherPort() {
  const t = buildTestApp();
  const { clientId, clientSecret } = await t.seed.client({ redirectUri: REGISTERED });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const verifier = makeVerifier();
  const pkce = { code_challenge: await sha256Base64Url(verifier), code_challenge_method: "S256" };
  const consent = await browser.get(authorizePath(clientId, { redirect_uri: PRESENTED, ...pkce }));
  assert.equal(consent.status, 200);
  const approved = await browser.post("/oauth/authorize", { ...formFields(await consent.text(), "/oauth/authorize"), decision: "approve" });
  assert.equal(approved.status, 303);
  const location = new URL(approved.headers.get("location") ?? "");
  return { t, browser, clientId, clientSecret, location, code: location.searchParams.get("code") ?? "", verifier };
}

test("a native app's loopback callback on any port receives the code there (RFC 8252 §7.3)", async () => {
  const { t, clientId, clientSecret, location, code, verifier } = await approvedOnAnotherPort();
  assert.equal(location.origin + location.pathname, PRESENTED);
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code", code, redirect_uri: PRESENTED, client_id: clientId, client_secret: clientSecret,
    code_verifier: verifier,
  }));
  assert.equal(res.status, 200);
  const issued = (await res.json()) as { access_token: string; refresh_token: string };
  assert.match(issued.access_token, /^fgat_/);
  // The refresh grant, which checks a redirect_uri it is sent against the registration, accepts the port too.
  const refreshed = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token", refresh_token: issued.refresh_token, redirect_uri: PRESENTED, client_id: clientId, client_secret: clientSecret,
  }));
  assert.equal(refreshed.status, 200);
});

test("the code exchange must repeat the port the authorization request used (RFC 6749 §4.1.3)", async () => {
  const { t, clientId, clientSecret, code, verifier } = await approvedOnAnotherPort();
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code", code, redirect_uri: REGISTERED, client_id: clientId, client_secret: clientSecret,
    code_verifier: verifier,
  }));
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, "invalid_grant");
});

test("an https redirect URI on another port is still refused with the error page", async () => {
  const t = buildTestApp();
  const { clientId } = await t.seed.client({ redirectUri: "https://client.example/cb" });
  const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { redirect_uri: "https://client.example:8443/cb" })}`));
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
});

// RFC 8252 §8: any program on the device can listen on a loopback port and present a native app's client_id.

test("a native app (loopback redirect URI) must send PKCE, even when PKCE is not required server-wide", async () => {
  const t = buildTestApp();
  assert.equal(t.config.requirePkce, false);
  const { clientId } = await t.seed.client({ redirectUri: REGISTERED });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const res = await browser.get(authorizePath(clientId, { redirect_uri: PRESENTED }));
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get("location") ?? "");
  assert.equal(location.origin + location.pathname, PRESENTED);
  assert.equal(location.searchParams.get("error"), "invalid_request");
  assert.match(location.searchParams.get("error_description") ?? "", /PKCE is required/);
  assert.equal(location.searchParams.get("code"), null);
});

test("a web application (https redirect URI) may still leave PKCE out unless the server requires it", async () => {
  const t = buildTestApp();
  const { clientId } = await t.seed.client({ redirectUri: "https://client.example/cb" });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const res = await browser.get(authorizePath(clientId));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /Approve/);
});

test("a native app's earlier approval is not reused: every request shows the consent page (RFC 8252 §8.6)", async () => {
  const { browser, clientId } = await approvedOnAnotherPort();
  // The same signed-in browser; a second request from "the app" (or anything else) on yet another port.
  const again = await browser.get(authorizePath(clientId, {
    redirect_uri: "http://127.0.0.1:40404/callback",
    code_challenge: await sha256Base64Url(makeVerifier()),
    code_challenge_method: "S256",
  }));
  assert.equal(again.status, 200, "consent page, not a silent redirect with a code");
  assert.equal(again.headers.get("location"), null);
  assert.match(await again.text(), /Approve/);
});
