// Demo state across processes: two apps on one database file stand in for `serve --workers 2`, whose kernel
// hands each connection of one browser to whichever worker accepts it.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/contract.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";

interface Workers {
  t: TestApp;
  apps: App[];
  stores: Store[];
  browser: TestBrowser;
  user: { username: string; password: string };
  dbPath: string;
  /** Every access and refresh token the demo client received, read off its own token responses. */
  tokens: string[];
  cleanup(): Promise<void>;
}

/** Two demo-mode apps, each with its own connection to one database file; the browser alternates between them. */
async function twoWorkers(): Promise<Workers> {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-demo-state-"));
  const dbPath = join(dir, "fieldgate.db");
  const t = await openTestApp({ FIELDGATE_DB: dbPath, FIELDGATE_DEMO: "true" });
  const { clientId, clientSecret } = await t.seed.client({ name: "Demo", redirectUri: `${t.config.baseUrl}/demo/callback` });
  const user = await t.seed.user();
  await t.seed.fields(3);
  const stores = [t.store, openStore(dbPath)];
  const tokens: string[] = [];
  const apps = stores.map((store) => {
    const app = createApp({
      config: t.config,
      store,
      clock: t.app.deps.clock,
      log: (event, fields = {}) => t.log.push({ event, fields }),
      demo: { clientId, clientSecret },
    });
    const selfFetch = app.deps.selfFetch;
    app.deps.selfFetch = async (request) => {
      const response = await selfFetch(request);
      for (const match of (await response.clone().text()).matchAll(/"(?:access|refresh)_token":"([^"]+)"/g)) tokens.push(match[1]!);
      return response;
    };
    return app;
  });
  let next = 0;
  const roundRobin = {
    deps: apps[0]!.deps,
    fetch: (request: Request, info?: { remoteAddress?: string }) => apps[next++ % 2]!.fetch(request, info),
    close: async () => {},
  };
  return {
    t, apps, stores, user, dbPath, tokens,
    browser: testBrowser(roundRobin),
    async cleanup() {
      for (const store of stores) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Start (one worker), sign in and approve, callback, demo page: each request on the other worker than the last. */
async function walkthrough(w: Workers): Promise<string> {
  const start = await w.browser.get("/demo/start");
  assert.equal(start.status, 302);
  const authorize = start.headers.get("location")!;
  await signIn(w.browser, w.user, authorize);
  const consent = await (await w.browser.get(authorize)).text();
  const approved = await w.browser.post("/oauth/authorize", { ...formFields(consent, "/oauth/authorize"), decision: "approve" });
  const callback = new URL(approved.headers.get("location")!);
  const done = await w.browser.get(callback.pathname + callback.search);
  assert.equal(done.status, 303, await done.text());
  return (await w.browser.get("/demo")).text();
}

test("the demo works when its requests land on different workers sharing the database", async () => {
  const w = await twoWorkers();
  try {
    const page = await walkthrough(w);
    assert.match(page, /POST \/oauth\/token \(authorization_code\) <span class="status">HTTP 200/);
    assert.match(page, /&quot;total_count&quot;: 3/);
    // Refresh and revoke, each on whichever worker comes next, find the tokens the other one stored.
    assert.equal((await w.browser.post("/demo/refresh", formFields(page, "/demo/refresh"))).status, 303);
    const refreshed = await (await w.browser.get("/demo")).text();
    assert.match(refreshed, /POST \/oauth\/token \(refresh_token\) <span class="status">HTTP 200/);
    assert.equal((await w.browser.post("/demo/revoke", formFields(refreshed, "/demo/revoke"))).status, 303);
    assert.match(await (await w.browser.get("/demo")).text(), /POST \/oauth\/revoke \(refresh_token\) <span class="status">HTTP 200/);
  } finally {
    await w.cleanup();
  }
});

test("the database holds no demo token, verifier or cookie in the clear", async () => {
  const w = await twoWorkers();
  try {
    const page = await walkthrough(w);
    await w.browser.post("/demo/refresh", formFields(page, "/demo/refresh"));
    assert.ok(w.tokens.length >= 4, `captured ${w.tokens.length} tokens`);
    const cookie = w.browser.cookies.get("fieldgate_demo")!;
    assert.match(cookie, /^fgss_/);
    const disk = ["", "-wal"].map((s) => w.dbPath + s).filter(existsSync).map((p) => readFileSync(p).toString("latin1")).join("\n");
    assert.ok(disk.includes("demo_states"), "the scan reads the database that holds the demo state");
    for (const secret of [...w.tokens, cookie]) assert.ok(!disk.includes(secret), "a demo secret is on disk in the clear");
    // Nor anything that looks like one (the PKCE verifier and state are random base64url too, but unprefixed).
    assert.doesNotMatch(disk, /fg(?:at|rt|ss)_[A-Za-z0-9_-]{43}/);
  } finally {
    await w.cleanup();
  }
});

test("a demo is forgotten after 15 minutes on every worker", async () => {
  const w = await twoWorkers();
  try {
    const page = await walkthrough(w);
    w.t.clock.advance(15 * 60);
    for (let i = 0; i < 2; i++) {
      assert.equal((await w.browser.post("/demo/refresh", formFields(page, "/demo/refresh"))).status, 403);
    }
  } finally {
    await w.cleanup();
  }
});
