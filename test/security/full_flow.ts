// The whole service exercised once through its real endpoints and pages, collecting every plaintext credential.
import assert from "node:assert/strict";
import { authorizePath, formFields, testBrowser } from "../helpers/browser_session.ts";
import { BASE, basicAuth, postForm, postJson } from "../helpers/requests.ts";
import type { FileApp } from "./file_app.ts";

export const METRICS_TOKEN = "metrics-bearer-secret-4f1c9e";
const PASSWORD = "correct horse battery staple";
const WRONG_PASSWORD = "wrong horse battery staple";
const WRONG_SECRET = "fgcs_this-is-a-wrong-secret-0123456789abcdefghij";

async function json(res: Response, status = 200): Promise<Record<string, string>> {
  assert.equal(res.status, status, `${res.url} answered ${res.status}`);
  return await res.json() as Record<string, string>;
}

/**
 * Every flow the service has, through the real endpoints and pages; returns every plaintext credential it used or
 * received.
 */
export async function fullFlow(f: FileApp): Promise<string[]> {
  const secrets: string[] = [PASSWORD, WRONG_PASSWORD, WRONG_SECRET, METRICS_TOKEN];
  const cc = await f.client("client_credentials");
  const web = await f.client("authorization_code");
  await f.user("farmer@example.com", PASSWORD);
  secrets.push(cc.clientSecret, web.clientSecret);

  // Client credentials, both client authentication methods.
  const cc1 = await json(await f.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: cc.clientId, client_secret: cc.clientSecret })));
  const cc2 = await json(await f.app.fetch(postForm("/oauth/token", { grant_type: "client_credentials" }, { authorization: basicAuth(cc.clientId, cc.clientSecret) })));
  secrets.push(cc1.access_token!, cc2.access_token!);

  // Code flow through the pages: a failed sign-in, then sign-in, consent, code exchange.
  const browser = testBrowser(f.app);
  const signInPage = await (await browser.get(authorizePath(web.clientId))).text();
  const fields = formFields(signInPage, "/signin");
  assert.equal((await browser.post("/signin", { ...fields, username: "farmer@example.com", password: WRONG_PASSWORD })).status, 400);
  const retry = formFields(await (await browser.get(authorizePath(web.clientId))).text(), "/signin");
  const signedIn = await browser.post("/signin", { ...retry, username: "farmer@example.com", password: PASSWORD });
  assert.equal(signedIn.status, 303);
  secrets.push(...browser.cookies.values(), fields.csrf!, retry.csrf!);
  const consent = formFields(await (await browser.get(signedIn.headers.get("location")!)).text(), "/oauth/authorize");
  secrets.push(consent.csrf!);
  const approved = await browser.post("/oauth/authorize", { ...consent, decision: "approve" });
  const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
  assert.ok(code);
  secrets.push(code);
  const pair = await json(await f.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code", client_id: web.clientId, client_secret: web.clientSecret, code, redirect_uri: "https://client.example/cb",
  })));
  // Replaying the code revokes the grant (and is audited); only after the refresh below, on a fresh grant.
  const refreshed = await json(await f.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token", client_id: web.clientId, client_secret: web.clientSecret, refresh_token: pair.refresh_token!,
  })));
  secrets.push(pair.access_token!, pair.refresh_token!, refreshed.access_token!, refreshed.refresh_token!);

  // Use and inspect the tokens, fail a client authentication, scrape metrics, revoke.
  for (const token of [cc1.access_token!, refreshed.access_token!]) {
    const gql = await f.app.fetch(new Request(`${BASE}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: "{ fields { total_count } viewer { username } }" }),
    }));
    assert.equal(gql.status, 200);
    assert.equal((await f.app.fetch(new Request(`${BASE}/oauth/token/info`, { headers: { authorization: `Bearer ${token}` } }))).status, 200);
  }
  await json(await f.app.fetch(postJson("/oauth/introspect", { client_id: web.clientId, client_secret: web.clientSecret, token: refreshed.refresh_token! })));
  await json(await f.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: cc.clientId, client_secret: WRONG_SECRET })), 401);
  // Credentials in the wrong fields, a common integration mistake: whatever lands in client_id may be a secret.
  await json(await f.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: cc.clientSecret, client_secret: cc.clientId })), 401);
  await json(await f.app.fetch(postForm("/oauth/token", { grant_type: "client_credentials" }, { authorization: basicAuth(web.clientSecret, web.clientId) })), 401);
  await json(await f.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: cc1.access_token! })), 401);
  await json(await f.app.fetch(postJson("/oauth/revoke", { client_id: PASSWORD, client_secret: "x", token: "y" })), 401);
  assert.equal((await f.app.fetch(new Request(`${BASE}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))).status, 200);
  await json(await f.app.fetch(postJson("/oauth/revoke", { client_id: web.clientId, client_secret: web.clientSecret, token: refreshed.refresh_token!, token_type_hint: "refresh_token" })));
  await json(await f.app.fetch(postJson("/oauth/revoke", { client_id: cc.clientId, client_secret: cc.clientSecret, token: cc2.access_token! })));
  // A code replay: the server must recognise it without ever having stored the code itself.
  await json(await f.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code", client_id: web.clientId, client_secret: web.clientSecret, code, redirect_uri: "https://client.example/cb",
  })), 400);
  return secrets.filter((s) => s.length >= 8);
}

