import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

/** Signs a user in, approves the test client and exchanges the code at the real token endpoint. */
async function authorizedApp(): Promise<{ t: TestApp; browser: TestBrowser; accessToken: string; clientId: string; userId: number }> {
  const t = buildTestApp();
  const { clientId, clientSecret } = await t.seed.client({ name: "Field notes app" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const consent = await (await browser.get(authorizePath(clientId))).text();
  const approved = await browser.post("/oauth/authorize", { ...formFields(consent, "/oauth/authorize"), decision: "approve" });
  const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "authorization_code",
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uri: "https://client.example/cb",
    code,
  }));
  assert.equal(res.status, 200);
  const body = await res.json() as { access_token: string };
  return { t, browser, accessToken: body.access_token, clientId, userId: user.id };
}

test("/account without a session redirects to sign-in", async () => {
  const t = buildTestApp();
  const res = await testBrowser(t.app).get("/account");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/signin?next=%2Faccount");
});

test("/account lists the applications the user has authorized", async () => {
  const { browser } = await authorizedApp();
  const res = await browser.get("/account");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  const body = await res.text();
  assert.match(body, /Field notes app/);
  assert.match(body, /your username, your name and your organizations&#39; names/, "what the approved scope gives");
  assert.match(body, /Revoke access/);
});

test("/account shows no applications for a user who authorized none", async () => {
  const t = buildTestApp();
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  assert.match(await (await browser.get("/account")).text(), /not authorized any applications/);
});

test("revoking an application kills its tokens and forgets the consent", async () => {
  const { t, browser, accessToken, clientId, userId } = await authorizedApp();
  const page = await (await browser.get("/account")).text();
  const res = await browser.post("/account/revoke", formFields(page, "/account/revoke"));
  assert.equal(res.status, 303);
  assert.match(res.headers.get("location") ?? "", /^\/account\?revoked=/);
  assert.equal(await t.store.tokens.findActiveAccess(await tokenKey(t.app.deps, accessToken), t.clock.nowSeconds()), undefined);
  const client = (await t.store.clients.findByClientId(clientId))!;
  assert.equal(await t.store.consents.find(userId, client.id), undefined);
  assert.ok(t.log.some((l) => l.event === "audit.access_revoked_by_user"));
  const after = await (await browser.get(res.headers.get("location")!)).text();
  assert.match(after, /Access for Field notes app was revoked/);
  assert.doesNotMatch(after, /Revoke access/);
  // Consent is no longer remembered: the next authorization asks again.
  assert.equal((await browser.get(authorizePath(clientId))).status, 200);
});

test("a crafted /account?revoked= link announces nothing and names no client", async () => {
  const { t, browser, clientId } = await authorizedApp();
  const other = await t.seed.client({ name: "Back-office sync", grant: "client_credentials" });
  for (const query of [`revoked=${clientId}`, `revoked=${other.clientId}`, `revoked=${other.clientId}&notice=${"A".repeat(43)}`]) {
    const body = await (await browser.get(`/account?${query}`)).text();
    assert.doesNotMatch(body, /was revoked/, query);
    assert.doesNotMatch(body, /Back-office sync/, query);
  }
  // A notice signed for one client does not carry over to another.
  const page = await (await browser.get("/account")).text();
  const res = await browser.post("/account/revoke", formFields(page, "/account/revoke"));
  const notice = new URL(res.headers.get("location")!, "http://x").searchParams.get("notice")!;
  const swapped = await (await browser.get(`/account?${new URLSearchParams({ revoked: other.clientId, notice })}`)).text();
  assert.doesNotMatch(swapped, /was revoked|Back-office sync/);
});

const forged: Array<{ name: string; change: (f: Record<string, string>) => Record<string, string> }> = [
  { name: "no CSRF token", change: ({ csrf: _, ...f }) => f },
  { name: "a forged CSRF token", change: (f) => ({ ...f, csrf: "A".repeat(43) }) },
  { name: "another application's client_id", change: (f) => ({ ...f, client_id: "someone-else" }) },
];

for (const row of forged) {
  test(`revoking with ${row.name} is refused and the tokens stay live`, async () => {
    const { t, browser, accessToken } = await authorizedApp();
    const page = await (await browser.get("/account")).text();
    const res = await browser.post("/account/revoke", row.change(formFields(page, "/account/revoke")));
    assert.equal(res.status, 403);
    assert.ok(await t.store.tokens.findActiveAccess(await tokenKey(t.app.deps, accessToken), t.clock.nowSeconds()));
  });
}

test("revoking after the session ended revokes nothing and leads to sign-in, then back to the account page", async () => {
  const { t, browser, clientId, userId } = await authorizedApp();
  const fields = formFields(await (await browser.get("/account")).text(), "/account/revoke");
  t.clock.advance(t.config.sessionTtlSeconds + 1);
  const res = await browser.post("/account/revoke", fields);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/signin?next=%2Faccount&session=ended");
  const client = (await t.store.clients.findByClientId(clientId))!;
  assert.ok(await t.store.consents.find(userId, client.id), "nothing was revoked");
  assert.ok(!t.log.some((l) => l.event === "audit.access_revoked_by_user"));
  const body = await (await browser.get(res.headers.get("location")!)).text();
  assert.match(body, /Your session had ended, so nothing was changed/);
  assert.equal(formFields(body, "/signin").next, "/account");
});
