// The Doorkeeper cut-over end to end: `import doorkeeper` into a database file, then a real listening server that
// Doorkeeper-era clients and people use with the credentials they already have.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../../src/app.ts";
import { toNodeListener } from "../../src/adapters/node_listener.ts";
import { cliHarness } from "../cli/harness.ts";
import { openTestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import {
  applicationsCsv, integrationUsersCsv, ownersCsv, PLAIN, PLAINTEXTS, SYNC_UID, tokensCsv, WEB_REDIRECTS, WEB_UID,
} from "../helpers/doorkeeper_fixtures.ts";

/** An App whose fetch goes over the network to `origin`, so the browser helper drives the real server. */
function overNetwork(origin: string): App {
  return {
    async fetch(request: Request) {
      const url = new URL(request.url);
      const body = request.method === "GET" ? undefined : await request.text();
      return fetch(origin + url.pathname + url.search, { method: request.method, headers: request.headers, body, redirect: "manual" });
    },
  } as unknown as App;
}

test("after the import, Doorkeeper clients and people carry on with what they hold, and nothing plaintext is stored", async () => {
  const h = cliHarness();
  const imported = await h.run(["import", "doorkeeper",
    "--applications", h.file("apps.csv", applicationsCsv()),
    "--integration-users", h.file("integration.csv", integrationUsersCsv()),
    "--owners", h.file("owners.csv", ownersCsv()),
    "--tokens", h.file("tokens.csv", tokensCsv()),
  ]);
  assert.equal(imported.code, 0, imported.stderr);

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Same fake start time as the import (2026-01-01T00:00:00Z): the Doorkeeper rows' expiries are relative to it.
  const t = await openTestApp({ FIELDGATE_DB: h.dbPath, FIELDGATE_BASE_URL: origin });
  server.on("request", toNodeListener(t.app, origin));
  const post = async (path: string, body: Record<string, string>) => {
    const res = await fetch(origin + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };
  const fieldCount = async (token: string) => {
    const res = await fetch(`${origin}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: "{ fields { total_count } }" }),
    });
    return res.status === 200 ? ((await res.json()) as { data: { fields: { total_count: number } } }).data.fields.total_count : res.status;
  };
  const web = { client_id: WEB_UID, client_secret: PLAIN.webSecret };
  const refresh = (refreshToken: string) => post("/oauth/token", { grant_type: "refresh_token", refresh_token: refreshToken, ...web });
  try {
    await t.seed.fields(3, { org: "acme" });

    // The old client_id and secret of a client-credentials application get a token (its secret was SHA-256 hashed).
    const cc = await post("/oauth/token", { grant_type: "client_credentials", client_id: SYNC_UID, client_secret: PLAIN.syncSecret });
    assert.equal(cc.status, 200);
    assert.equal(cc.body.refresh_token, undefined);
    assert.equal(await fieldCount(String(cc.body.access_token)), 3);
    // Imported access tokens work as they are, for the owner's organizations and the integration user's.
    assert.equal(await fieldCount(PLAIN.aliceAccess), 3);
    assert.equal(await fieldCount(PLAIN.syncAccess), 3);

    // An imported refresh token refreshes (JSON body) into fieldgate tokens that work at /graphql.
    const refreshed = await refresh(PLAIN.aliceRefresh);
    assert.equal(refreshed.status, 200);
    const successor = String(refreshed.body.access_token);
    assert.equal(await fieldCount(successor), 3);
    // Replaying the imported refresh token is reuse: the whole family goes, the successor with it.
    const replayed = await refresh(PLAIN.aliceRefresh);
    assert.equal(replayed.status, 400);
    assert.equal(replayed.body.error, "invalid_grant");
    assert.equal(await fieldCount(successor), 401);
    assert.equal(await fieldCount(PLAIN.aliceAccess), 401);

    // Of a rotated pair, the first presented (here the newer one) refreshes and the other is then reuse.
    const first = await refresh(PLAIN.bobRefreshB);
    assert.equal(first.status, 200);
    const bobSuccessor = String(first.body.access_token);
    assert.equal(await fieldCount(bobSuccessor), 3);
    const other = await refresh(PLAIN.bobRefreshA);
    assert.equal(other.body.error, "invalid_grant");
    assert.equal(await fieldCount(bobSuccessor), 401);

    // A row revoked in Doorkeeper was not imported; neither was a row whose owner has no mapping.
    assert.equal((await refresh(PLAIN.aliceRevokedRefresh)).body.error, "invalid_grant");
    assert.equal(await fieldCount(PLAIN.strangerAccess), 401);

    // A person signs in with their old password; the stored bcrypt digest is PBKDF2 afterwards.
    const browser = testBrowser(overNetwork(origin));
    const wrong = await signIn(browser, { username: "bob@example.com", password: "not bob's password" });
    assert.equal(wrong.status, 400);
    const signedIn = await signIn(browser, { username: "alice@example.com", password: PLAIN.alicePassword });
    assert.equal(signedIn.status, 303);
    const stored = await t.store.users.findByUsername("alice@example.com");
    assert.match(stored?.passwordHash ?? "", /^pbkdf2-sha256\$/);
    assert.match((await t.store.users.findByUsername("bob@example.com"))?.passwordHash ?? "", /^\$2a\$12\$/);
    // Her Doorkeeper approval was imported: the application gets a code at its second URI without a consent page.
    const authorized = await browser.get(authorizePath(WEB_UID, { redirect_uri: WEB_REDIRECTS[1] }));
    assert.equal(authorized.status, 302);
    assert.ok(authorized.headers.get("location")?.startsWith(`${WEB_REDIRECTS[1]}?code=`));

    // An imported access token stops at its Doorkeeper expiry (created 23:45 + 7 200 s).
    t.clock.advance(6_300);
    assert.equal(await fieldCount(PLAIN.syncAccess), 401);

    // Nothing plaintext in the database files, the audit table or either log.
    await t.store.maintenance!.checkpoint();
    const disk = ["", "-wal", "-shm"].map((s) => h.dbPath + s).filter(existsSync).map((p) => readFileSync(p).toString("latin1")).join("\n");
    const logs = JSON.stringify(t.log) + JSON.stringify(h.log) + imported.stdout + imported.stderr;
    const leaked = (haystack: string) => PLAINTEXTS.filter((s) => haystack.includes(s));
    assert.deepEqual(leaked(disk), [], "plaintext in the database files");
    assert.deepEqual(leaked(logs), [], "plaintext in the log or the command's output");
    // The scan can fail: the fixtures' plaintexts do reach the files the import read.
    assert.ok(leaked(tokensCsv()).length > 5);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.store.close();
  }
});
