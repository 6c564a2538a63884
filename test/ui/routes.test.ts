import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { BASE, get } from "../helpers/requests.ts";
import { FORM_ROUTES, type OpenForm } from "../helpers/form_posts.ts";
import { createApp } from "../../src/app.ts";
import { silentLog } from "../../src/deps.ts";

test("the landing page explains the service and lists its endpoints, without a demo button by default", async () => {
  const t = await openTestApp();
  const res = await t.app.fetch(get("/"));
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  const body = await res.text();
  for (const path of ["/oauth/authorize", "/oauth/token", "/oauth/revoke", "/graphql"]) assert.ok(body.includes(path), path);
  assert.doesNotMatch(body, /Try the demo/);
  assert.match(body, /<link rel="stylesheet" href="\/assets\/style.css">/);
  assert.doesNotMatch(body, /<script|style=/);
});

test("the landing page offers the demo only when demo credentials were passed in demo mode", async () => {
  const t = await openTestApp({ FIELDGATE_DEMO: "true" });
  const demo = { clientId: "demo-client", clientSecret: "s" };
  const withDemo = createApp({ config: t.config, store: t.store, clock: t.app.deps.clock, random: t.app.deps.random, log: silentLog, demo });
  // Absolute, on the base URL: opened under another host name (127.0.0.1 for localhost), the demo's cookie would
  // stay on that host while its callback arrives at the base URL's.
  assert.match(await (await withDemo.fetch(get("/"))).text(), /href="http:\/\/fieldgate\.test\/demo\/start"/);
  const off = await openTestApp({ FIELDGATE_DEMO: "false" });
  const notDemo = createApp({ config: off.config, store: off.store, log: silentLog, demo });
  assert.doesNotMatch(await (await notDemo.fetch(get("/"))).text(), /Try the demo/);
  assert.equal((await notDemo.fetch(get("/demo/start"))).status, 404);
});

test("the landing page names the signed-in user", async () => {
  const t = await openTestApp();
  const user = await t.seed.user({ username: "ada@example.com" });
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  assert.match(await (await browser.get("/")).text(), /ada@example.com/);
});

test("the landing page confirms a sign-out, only to a browser that is signed out", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  assert.doesNotMatch(await (await browser.get("/?signed_out=1")).text(), /You have signed out/, "a stale or crafted link");
  const account = await (await browser.get("/account")).text();
  const out = await browser.post("/signout", formFields(account, "/signout"));
  const body = await (await browser.get(out.headers.get("location")!)).text();
  assert.match(body, /<p class="notice" role="status">You have signed out\.<\/p>/);
  assert.doesNotMatch(await (await browser.get("/")).text(), /You have signed out/);
});

test("the stylesheet is served as CSS from our own origin", async () => {
  const t = await openTestApp();
  const res = await t.app.fetch(get("/assets/style.css"));
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/css/);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const css = await res.text();
  assert.match(css, /:focus-visible/);
  assert.doesNotMatch(css, /url\(|@import/);
});

test("browser pages send no CORS headers even when asked cross-origin", async () => {
  const t = await openTestApp({ FIELDGATE_CORS_ORIGINS: "https://app.example" });
  for (const path of ["/", "/signin", "/oauth/authorize"]) {
    const res = await t.app.fetch(get(path, { origin: "https://app.example" }));
    assert.equal(res.headers.get("access-control-allow-origin"), null, path);
  }
});

const OWN_PAGE = { origin: BASE, "sec-fetch-site": "same-origin" };

/** Submits the form as our own page would, after `refused` was answered, and checks that it took effect. */
async function submitsAfter(form: OpenForm, path: string, refused: string): Promise<number> {
  const res = await form.browser.post(path, form.refill?.(refused) ?? form.fields, OWN_PAGE);
  assert.equal(await form.changed(), true, "the form took effect");
  return res.status;
}

// What another site's form would send if the browser attached our cookie to it: the cookie and same-site metadata,
// and no csrf field at all (a forged token is a different request). The cookie's session or form must survive it.
for (const route of FORM_ROUTES) {
  test(`POST ${route.path} with the cookie but no csrf field changes nothing (${route.withoutToken}), and the form still works`, async () => {
    const form = await route.open();
    const { csrf: _, ...withoutToken } = form.fields;
    assert.ok(_, "the page's form carried a token");
    const res = await form.browser.post(route.path, withoutToken, OWN_PAGE);
    assert.equal(res.status, route.withoutToken);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(await form.changed(), false);
    assert.equal(await submitsAfter(form, route.path, await res.text()), route.done);
  });
}

const CROSS_SITE: Array<{ name: string; headers: Record<string, string> }> = [
  { name: "another site's Origin", headers: { origin: "https://evil.example" } },
  { name: "Sec-Fetch-Site: cross-site", headers: { "sec-fetch-site": "cross-site" } },
  { name: "both, as a browser sends them", headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" } },
];

for (const route of FORM_ROUTES) {
  for (const row of CROSS_SITE) {
    test(`POST ${route.path} with ${row.name} is refused with a 403 page even with the form's token`, async () => {
      const form = await route.open();
      const res = await form.browser.post(route.path, form.fields, row.headers);
      assert.equal(res.status, 403);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      assert.deepEqual(res.headers.getSetCookie(), []);
      const page = await res.text();
      assert.match(page, /Another site sent this form, so nothing was changed/);
      assert.equal(await form.changed(), false);
      assert.equal(await submitsAfter(form, route.path, page), route.done);
    });
  }
}

// Chromium sends Origin: null on our own forms (Referrer-Policy: no-referrer); older clients send neither header.
const SAME_SITE: Array<{ name: string; headers: Record<string, string> }> = [
  { name: "our Origin and Sec-Fetch-Site: same-origin", headers: OWN_PAGE },
  { name: "Origin: null and Sec-Fetch-Site: same-origin", headers: { origin: "null", "sec-fetch-site": "same-origin" } },
  { name: "Sec-Fetch-Site: none", headers: { "sec-fetch-site": "none" } },
  { name: "neither header", headers: {} },
];

for (const route of FORM_ROUTES) {
  for (const row of SAME_SITE) {
    test(`POST ${route.path} with ${row.name} takes effect`, async () => {
      const form = await route.open();
      const res = await form.browser.post(route.path, form.fields, row.headers);
      assert.equal(res.status, route.done);
      assert.equal(await form.changed(), true);
    });
  }
}
