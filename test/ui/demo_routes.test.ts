import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { createApp, type App } from "../../src/app.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";

const FULL_TOKEN = /fg[ar]t_[A-Za-z0-9_-]{43}/;

interface Demo {
  t: TestApp;
  app: App;
  browser: TestBrowser;
  user: { id: number; username: string; password: string };
}

/** A demo-mode app with the demo client registered as the seed registers it, and three fields. */
async function demoApp(): Promise<Demo> {
  const t = await openTestApp({ FIELDGATE_DEMO: "true" });
  const { clientId, clientSecret } = await t.seed.client({
    name: "Demo field notes app",
    redirectUri: `${t.config.baseUrl}/demo/callback`,
    scope: "fields:read",
  });
  const user = await t.seed.user();
  await t.seed.fields(3);
  const app = createApp({
    config: t.config,
    store: t.store,
    clock: t.app.deps.clock,
    random: t.app.deps.random,
    log: (event, fields = {}) => t.log.push({ event, fields }),
    demo: { clientId, clientSecret },
  });
  return { t, app, browser: testBrowser(app), user };
}

/** Start → sign in → consent; returns the consent POST response for `decision`. */
async function throughConsent(d: Demo, decision: "approve" | "deny"): Promise<Response> {
  const start = await d.browser.get("/demo/start");
  assert.equal(start.status, 302);
  const authorize = start.headers.get("location")!;
  assert.match(authorize, /^\/oauth\/authorize\?/);
  assert.match(authorize, /code_challenge_method=S256/);
  await signIn(d.browser, d.user, authorize);
  const consent = await (await d.browser.get(authorize)).text();
  return d.browser.post("/oauth/authorize", { ...formFields(consent, "/oauth/authorize"), decision });
}

async function approvedDemoPage(d: Demo): Promise<string> {
  const approved = await throughConsent(d, "approve");
  const callback = new URL(approved.headers.get("location")!);
  assert.equal(callback.pathname, "/demo/callback");
  const done = await d.browser.get(callback.pathname + callback.search);
  assert.equal(done.status, 303);
  assert.equal(done.headers.get("location"), "/demo");
  return (await d.browser.get("/demo")).text();
}

test("the demo walks through code exchange and shows the token response and total_count", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  assert.match(page, /POST \/oauth\/token \(authorization_code\) <span class="status">HTTP 200/);
  assert.match(page, /&quot;token_type&quot;: &quot;Bearer&quot;/);
  assert.match(page, /&quot;total_count&quot;: 3/);
  assert.doesNotMatch(page, FULL_TOKEN, "tokens are never rendered in full");
  assert.ok(!page.includes((d.app.deps.demo!).clientSecret), "the client secret is never rendered");
});

test("the demo refreshes the tokens and queries again", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const res = await d.browser.post("/demo/refresh", formFields(page, "/demo/refresh"));
  assert.equal(res.status, 303);
  const after = await (await d.browser.get("/demo")).text();
  assert.match(after, /POST \/oauth\/token \(refresh_token\) <span class="status">HTTP 200/);
  assert.doesNotMatch(after, FULL_TOKEN);
});

test("the demo revokes the tokens, after which GraphQL refuses the access token", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const res = await d.browser.post("/demo/revoke", formFields(page, "/demo/revoke"));
  assert.equal(res.status, 303);
  const after = await (await d.browser.get("/demo")).text();
  assert.match(after, /POST \/oauth\/revoke \(refresh_token\) <span class="status">HTTP 200/);
  assert.match(after, /POST \/graphql [^<]*<span class="status">HTTP 401/);
  assert.doesNotMatch(after, /action="\/demo\/refresh"/);
});

test("a refresh refused for good (access revoked elsewhere) drops the demo's tokens and offers a fresh start", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const client = await d.t.store.clients.findByClientId(d.app.deps.demo!.clientId);
  await d.t.store.tokens.revokeUserClient(d.user.id, client!.id, d.t.clock.nowSeconds());
  const res = await d.browser.post("/demo/refresh", formFields(page, "/demo/refresh"));
  assert.equal(res.status, 303);
  const after = await (await d.browser.get("/demo")).text();
  assert.match(after, /POST \/oauth\/token \(refresh_token\) <span class="status">HTTP 400/);
  assert.match(after, /role="alert">The refresh token is no longer accepted; start the demo again/);
  assert.doesNotMatch(after, /action="\/demo\/refresh"/);
  assert.match(after, /href="\/demo\/start">Start the demo/);
});

test("a denied demo shows access_denied and holds no tokens", async () => {
  const d = await demoApp();
  const denied = await throughConsent(d, "deny");
  const callback = new URL(denied.headers.get("location")!);
  await d.browser.get(callback.pathname + callback.search);
  const page = await (await d.browser.get("/demo")).text();
  assert.match(page, /role="alert">Access was denied, so the application received no authorization code \(error=access_denied\)/);
  assert.doesNotMatch(page, /action="\/demo\/refresh"/);
  // The page's description must not claim a code arrived or was exchanged.
  assert.doesNotMatch(page, /received an authorization code|exchanged it|called <code>POST \/graphql/);
});

const badCallbacks: Array<{ name: string; change: (u: URL, b: TestBrowser) => void }> = [
  { name: "a wrong state", change: (u) => u.searchParams.set("state", "forged") },
  { name: "a wrong iss (mix-up)", change: (u) => u.searchParams.set("iss", "https://other.example") },
  { name: "no demo cookie", change: (_, b) => b.cookies.delete("fieldgate_demo") },
];

for (const row of badCallbacks) {
  test(`the demo callback with ${row.name} is refused without exchanging the code`, async () => {
    const d = await demoApp();
    const approved = await throughConsent(d, "approve");
    const callback = new URL(approved.headers.get("location")!);
    row.change(callback, d.browser);
    const res = await d.browser.get(callback.pathname + callback.search);
    assert.equal(res.status, 400);
    assert.equal(d.t.log.some((l) => l.event === "audit.token_issued"), false);
  });
}

test("demo refresh and revoke refuse a forged CSRF token", async () => {
  const d = await demoApp();
  await approvedDemoPage(d);
  for (const path of ["/demo/refresh", "/demo/revoke"]) {
    const res = await d.browser.post(path, { csrf: "A".repeat(43) });
    assert.equal(res.status, 403, path);
  }
});

test("demo refresh and revoke refuse another site's POST with a 403 page even with the form's token", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const crossSite: Array<Record<string, string>> = [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }];
  for (const path of ["/demo/refresh", "/demo/revoke"]) {
    for (const headers of crossSite) {
      const res = await d.browser.post(path, formFields(page, path), headers);
      assert.equal(res.status, 403, path);
      assert.match(await res.text(), /Another site sent this form, so nothing was changed/);
    }
  }
  assert.equal(await (await d.browser.get("/demo")).text(), page, "no step was added");
  const res = await d.browser.post("/demo/revoke", formFields(page, "/demo/revoke"), { origin: "null", "sec-fetch-site": "same-origin" });
  assert.equal(res.status, 303);
  assert.match(await (await d.browser.get("/demo")).text(), /POST \/oauth\/revoke \(refresh_token\) <span class="status">HTTP 200/);
});

test("a demo from one browser cannot be driven by another", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const res = await testBrowser(d.app).post("/demo/refresh", formFields(page, "/demo/refresh"));
  assert.equal(res.status, 403);
});

test("signing out ends the demo: its state is deleted, its cookie cleared, and its refresh refused", async () => {
  const d = await demoApp();
  const page = await approvedDemoPage(d);
  const keyHash = await d.app.deps.digest(d.browser.cookies.get("fieldgate_demo")!);
  const saved = () => d.t.store.demoStates.find(keyHash, d.t.clock.nowSeconds());
  assert.notEqual(await saved(), undefined);
  // The browser as it was before signing out: a second person at it would still hold this cookie jar.
  const stale = testBrowser(d.app);
  for (const [name, value] of d.browser.cookies) stale.cookies.set(name, value);
  const account = await (await d.browser.get("/account")).text();
  const out = await d.browser.post("/signout", formFields(account, "/signout"));
  assert.equal(out.status, 303);
  assert.ok(out.headers.getSetCookie().some((c) => /^fieldgate_demo=;.*Max-Age=0/.test(c)), "demo cookie cleared");
  assert.equal(await saved(), undefined);
  assert.equal((await stale.post("/demo/refresh", formFields(page, "/demo/refresh"))).status, 403);
  assert.doesNotMatch(await (await d.browser.get("/demo")).text(), /total_count/);
});

test("a link on another site does not restart a running demo; a same-origin start over does", async () => {
  const d = await demoApp();
  await approvedDemoPage(d);
  const keyHash = await d.app.deps.digest(d.browser.cookies.get("fieldgate_demo")!);
  const sealed = await d.t.store.demoStates.find(keyHash, d.t.clock.nowSeconds());
  for (const site of ["cross-site", "same-site"]) {
    const res = await d.browser.get("/demo/start", { "sec-fetch-site": site });
    assert.equal(res.status, 303, site);
    assert.equal(res.headers.get("location"), "/demo");
  }
  assert.equal(await d.t.store.demoStates.find(keyHash, d.t.clock.nowSeconds()), sealed, "state untouched");
  assert.match(await (await d.browser.get("/demo")).text(), /total_count/);
  const over = await d.browser.get("/demo/start", { "sec-fetch-site": "same-origin" });
  assert.equal(over.status, 302);
  assert.notEqual(await d.t.store.demoStates.find(keyHash, d.t.clock.nowSeconds()), sealed);
});

test("demo starts are limited per address: past the allowance a start is refused and writes nothing", async () => {
  const d = await demoApp();
  const allowance = d.t.config.throttleMaxFailures * SHARED_KEY_FACTOR;
  for (let i = 0; i < allowance; i++) {
    assert.equal((await testBrowser(d.app, { clientIp: "198.51.100.50" }).get("/demo/start")).status, 302, `start ${i}`);
  }
  const flooder = testBrowser(d.app, { clientIp: "198.51.100.50" });
  const refused = await flooder.get("/demo/start");
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get("content-type") ?? "", /^text\/html/);
  assert.equal(flooder.cookies.size, 0, "no demo cookie, so no row was written for it");
  assert.equal((await testBrowser(d.app, { clientIp: "198.51.100.51" }).get("/demo/start")).status, 302);
});

/** A HEAD request carrying the browser's cookies (a link checker or prefetcher in the same browser). */
function head(d: Demo, path: string): Promise<Response> {
  const cookie = [...d.browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  return d.app.fetch(new Request(new URL(path, "http://fieldgate.test"), { method: "HEAD", headers: { cookie } }));
}

// RFC 9110 §9.2.1: HEAD is safe, yet the router answers it with the GET handler.
test("HEAD /demo/callback answers without exchanging the code", async () => {
  const d = await demoApp();
  const approved = await throughConsent(d, "approve");
  const callback = new URL(approved.headers.get("location")!);
  const res = await head(d, callback.pathname + callback.search);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("set-cookie"), null);
  assert.equal(d.t.log.some((l) => l.event === "audit.token_issued"), false, "HEAD exchanged the code");
  // The code is still there for the real callback.
  assert.equal((await d.browser.get(callback.pathname + callback.search)).status, 303);
  assert.match(await (await d.browser.get("/demo")).text(), /&quot;total_count&quot;: 3/);
});

test("HEAD /demo/start neither replaces the running demo's state nor plants a cookie", async () => {
  const d = await demoApp();
  const approved = await throughConsent(d, "approve");
  const before = d.browser.cookies.get("fieldgate_demo");
  const res = await head(d, "/demo/start");
  assert.equal(res.headers.get("set-cookie"), null);
  assert.equal(d.browser.cookies.get("fieldgate_demo"), before);
  const callback = new URL(approved.headers.get("location")!);
  assert.equal((await d.browser.get(callback.pathname + callback.search)).status, 303, "the demo's state was replaced");
  assert.match(await (await d.browser.get("/demo")).text(), /&quot;total_count&quot;: 3/);
});
