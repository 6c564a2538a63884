import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { get } from "../helpers/requests.ts";
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
