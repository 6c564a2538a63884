import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp, openTestApp } from "../helpers/test_app.ts";
import { get, postJson } from "../helpers/requests.ts";
import { audit } from "../../src/oauth/audit.ts";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openStore } from "../../src/store/sqlite/store.ts";

const SECRET = "metrics-secret-0123456789";
const withMetrics = () => openTestApp({ FIELDGATE_METRICS_TOKEN: SECRET });
const scrape = (token = SECRET) => get("/metrics", { authorization: `Bearer ${token}` });

test("metrics is a 404 for every method when no metrics token is configured, as an unknown path is", async () => {
  const { app } = await openTestApp();
  const res = await app.fetch(scrape());
  assert.equal(res.status, 404);
  assert.equal((await res.json()).error, "not_found");
  // A 405 with Allow would tell a scanner the endpoint exists.
  const post = await app.fetch(new Request("http://fieldgate.test/metrics", { method: "POST" }));
  assert.equal(post.status, 404);
  assert.equal(post.headers.get("allow"), null);
});

const refused: { name: string; headers: Record<string, string>; challenge: RegExp }[] = [
  { name: "no Authorization header", headers: {}, challenge: /^Bearer realm="fieldgate"$/ },
  { name: "a wrong token", headers: { authorization: "Bearer wrong-secret-0123456789" }, challenge: /error="invalid_token"/ },
  { name: "a prefix of the token", headers: { authorization: `Bearer ${SECRET.slice(0, -1)}` }, challenge: /error="invalid_token"/ },
  { name: "another scheme", headers: { authorization: `Basic ${btoa(`x:${SECRET}`)}` }, challenge: /^Bearer realm="fieldgate"$/ },
];
for (const row of refused) {
  test(`metrics refuses ${row.name} with 401`, async () => {
    const { app } = await withMetrics();
    const res = await app.fetch(get("/metrics", row.headers));
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error, "invalid_token");
    assert.match(res.headers.get("www-authenticate") ?? "", row.challenge);
  });
}

test("metrics answers the configured bearer token with Prometheus text", async () => {
  const { app } = await withMetrics();
  const res = await app.fetch(scrape());
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.match(await res.text(), /^# TYPE fieldgate_http_requests_total counter$/m);
});

test("requests are labelled by route path; unknown paths as unmatched; 405 by its route", async () => {
  const { app } = await withMetrics();
  await app.fetch(get("/healthz?code=abc"));
  await app.fetch(get("/no/such/path-123"));
  await app.fetch(get("/another-unknown"));
  await app.fetch(postJson("/healthz", {}));
  const text = await (await app.fetch(scrape())).text();
  assert.ok(text.includes('fieldgate_http_requests_total{route="/healthz",method="GET",status="200"} 1'));
  assert.ok(text.includes('fieldgate_http_requests_total{route="unmatched",method="GET",status="404"} 2'));
  assert.ok(text.includes('fieldgate_http_requests_total{route="/healthz",method="POST",status="405"} 1'));
  assert.ok(text.includes('fieldgate_http_request_duration_seconds_count{route="unmatched"} 2'));
  assert.ok(!text.includes("path-123") && !text.includes("another-unknown") && !text.includes("abc"));
});

test("refused scrapes are themselves counted", async () => {
  const { app } = await withMetrics();
  await app.fetch(scrape("wrong-secret-0123456789"));
  const text = await (await app.fetch(scrape())).text();
  assert.ok(text.includes('fieldgate_http_requests_total{route="/metrics",method="GET",status="401"} 1'));
});

test("audit events recorded through the app's deps reach the token counters", async () => {
  const { app } = await withMetrics();
  await audit(app.deps, "token_issued", { detail: { grant_type: "client_credentials" } });
  await audit(app.deps, "refresh_reuse_detected", {});
  const text = await (await app.fetch(scrape())).text();
  assert.ok(text.includes('fieldgate_tokens_issued_total{grant="client_credentials"} 1'));
  assert.ok(text.includes('fieldgate_reuse_detections_total{kind="refresh_token"} 1'));
});

test("the metrics token is never logged", async () => {
  const { app, log } = await withMetrics();
  await app.fetch(scrape());
  await app.fetch(scrape(`${SECRET}x`));
  assert.ok(!JSON.stringify(log).includes(SECRET));
});

test("a client credentials token request shows up under tokens issued by grant", async () => {
  const { app, seed } = await withMetrics();
  const { clientId, clientSecret } = await seed.client({ grant: "client_credentials" });
  const res = await app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }));
  assert.equal(res.status, 200);
  const text = await (await app.fetch(scrape())).text();
  assert.ok(text.includes('fieldgate_tokens_issued_total{grant="client_credentials"} 1'));
  assert.ok(text.includes('fieldgate_http_requests_total{route="/oauth/token",method="POST",status="200"} 1'));
});

test("a store with a database server adds its round trips and statements as counters; SQLite adds none", async () => {
  const sqlite = await (await buildTestApp({ FIELDGATE_METRICS_TOKEN: SECRET }).app.fetch(scrape())).text();
  assert.doesNotMatch(sqlite, /fieldgate_database_/);
  const counts = { roundTrips: 0, statements: 0 };
  const store = { ...openStore(":memory:"), stats: () => ({ ...counts }) };
  const app = createApp({ config: loadConfig({ FIELDGATE_DB: ":memory:", FIELDGATE_METRICS_TOKEN: SECRET }), store, log: () => {} });
  counts.roundTrips = 12;
  counts.statements = 17;
  const text = await (await app.fetch(scrape())).text();
  assert.match(text, /^# TYPE fieldgate_database_round_trips_total counter$/m);
  assert.match(text, /^fieldgate_database_round_trips_total 12$/m);
  assert.match(text, /^fieldgate_database_statements_total 17$/m);
  assert.ok(text.endsWith("\n"));
  await app.close();
});

test("metrics carry fieldgate_build_info with the version the app was given, and \"unknown\" when none was", async () => {
  const config = loadConfig({ FIELDGATE_DB: ":memory:", FIELDGATE_METRICS_TOKEN: SECRET });
  const rows = [{ version: "1.2.3-rc.1", shown: "1.2.3-rc.1" }, { version: undefined, shown: "unknown" }];
  for (const row of rows) {
    const app = createApp({ config, store: openStore(":memory:"), log: () => {}, version: row.version });
    const text = await (await app.fetch(scrape())).text();
    assert.match(text, /^# TYPE fieldgate_build_info gauge$/m);
    assert.ok(text.split("\n").includes(`fieldgate_build_info{version="${row.shown}"} 1`), text.slice(0, 300));
    await app.close();
  }
});
