import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

/** Signs a user in, approves the test client and exchanges the code at the real token endpoint. */
async function authorizedApp(): Promise<{ t: TestApp; browser: TestBrowser; accessToken: string; clientId: string; userId: number }> {
  const t = await openTestApp();
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
  const t = await openTestApp();
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
  const t = await openTestApp();
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

/** One user signed in on `browsers` browsers, and another user signed in on one. */
async function signedInTwice(browsers = 2) {
  const t = await openTestApp();
  const user = await t.seed.user();
  const all: TestBrowser[] = [];
  for (let i = 0; i < browsers; i++) {
    const browser = testBrowser(t.app);
    assert.equal((await signIn(browser, user)).status, 303);
    all.push(browser);
  }
  const stranger = testBrowser(t.app);
  await signIn(stranger, await t.seed.user());
  return { t, user, browsers: all, stranger };
}

const isSignedIn = async (browser: TestBrowser) => (await browser.get("/account")).status === 200;

test("/account counts the user's other browsers, and signing them out ends those sessions but not this one or anyone else's", async () => {
  const { t, user, browsers: [here, phone, laptop], stranger } = await signedInTwice(3);
  const page = await (await here!.get("/account")).text();
  assert.match(page, /You are also signed in on 2 other browsers\./);
  const res = await here!.post("/account/signout-others", formFields(page, "/account/signout-others"));
  assert.equal(res.status, 303);
  assert.match(res.headers.get("location") ?? "", /^\/account\?ended=/);
  assert.equal(await isSignedIn(phone!), false);
  assert.equal(await isSignedIn(laptop!), false);
  assert.equal(await isSignedIn(stranger), true, "another user's session is untouched");
  const after = await (await here!.get(res.headers.get("location")!)).text();
  assert.match(after, /You were signed out everywhere else\./);
  assert.match(after, /You are not signed in anywhere else\./);
  assert.doesNotMatch(after, /action="\/account\/signout-others"/);
  const events = (await t.store.audit.list({ userId: user.id })).filter((e) => e.event === "other_sessions_ended");
  assert.equal(events.length, 1);
  assert.equal(events[0]!.userId, user.id);
  assert.deepEqual(events[0]!.detail, { sessions: 2 });
});

test("/account does not count the user's expired sessions in other browsers", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const old = testBrowser(t.app);
  await signIn(old, user);
  t.clock.advance(t.config.sessionTtlSeconds - 10);
  const here = testBrowser(t.app);
  await signIn(here, user);
  assert.match(await (await here.get("/account")).text(), /You are also signed in on 1 other browser\./);
  t.clock.advance(11);
  assert.match(await (await here.get("/account")).text(), /You are not signed in anywhere else\./);
});

test("a crafted /account?ended= link announces nothing, nor does one signed for another session", async () => {
  const { user, browsers: [here, other] } = await signedInTwice();
  for (const query of ["ended=1", `ended=${"A".repeat(43)}`]) {
    assert.doesNotMatch(await (await here!.get(`/account?${query}`)).text(), /signed out everywhere/, query);
  }
  const page = await (await other!.get("/account")).text();
  const res = await other!.post("/account/signout-others", formFields(page, "/account/signout-others"));
  const ended = new URL(res.headers.get("location")!, "http://x").searchParams.get("ended")!;
  await signIn(here!, user);
  assert.doesNotMatch(await (await here!.get(`/account?${new URLSearchParams({ ended })}`)).text(), /signed out everywhere/);
});

test("signing out other browsers with a forged CSRF token is refused and they stay signed in", async () => {
  const { browsers: [here, other] } = await signedInTwice();
  const fields = formFields(await (await here!.get("/account")).text(), "/account/signout-others");
  for (const csrf of [undefined, "A".repeat(43), await other!.get("/account").then((r) => r.text()).then((p) => formFields(p, "/account/signout-others").csrf)]) {
    const res = await here!.post("/account/signout-others", csrf === undefined ? {} : { ...fields, csrf });
    assert.equal(res.status, 403, String(csrf));
  }
  assert.equal(await isSignedIn(other!), true);
});

test("signing out other browsers after this session ended ends nothing and leads to sign-in", async () => {
  const { t, browsers: [here, other] } = await signedInTwice();
  const fields = formFields(await (await here!.get("/account")).text(), "/account/signout-others");
  await here!.post("/signout", formFields(await (await here!.get("/account")).text(), "/signout"));
  const res = await here!.post("/account/signout-others", fields);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/signin?next=%2Faccount&session=ended");
  assert.equal(await isSignedIn(other!), true);
  assert.ok(!t.log.some((l) => l.event === "audit.other_sessions_ended"));
});
