import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "./helpers/test_app.ts";
import { get, postJson } from "./helpers/requests.ts";
import { StoreBusyError } from "../src/store/errors.ts";
import { DatabaseSync } from "node:sqlite";

/** The error node:sqlite throws when the disk is full, made for real (max_page_count makes SQLite answer SQLITE_FULL). */
function diskFullError(): Error {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (x); PRAGMA max_page_count = 3");
  try {
    for (let i = 0; i < 100; i++) db.prepare("INSERT INTO t VALUES (?)").run("y".repeat(3000));
  } catch (error) {
    return error as Error;
  } finally {
    db.close();
  }
  throw new Error("expected SQLITE_FULL");
}

test("healthz answers 200 when the database is reachable", async () => {
  const { app } = await openTestApp();
  const res = await app.fetch(get("/healthz"));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
});

test("healthz answers 503 when the database is closed", async () => {
  const { app, store } = await openTestApp();
  await store.close();
  const res = await app.fetch(get("/healthz"));
  assert.equal(res.status, 503);
});

test("behind an https base URL every response tells browsers to keep to https (HSTS); over http none does", async () => {
  const secure = await openTestApp({ FIELDGATE_BASE_URL: "https://auth.example.com" });
  for (const res of [await secure.app.fetch(get("/healthz")), await secure.app.fetch(get("/nope")), await secure.app.fetch(get("/signin"))]) {
    assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000");
  }
  const plain = await openTestApp({ FIELDGATE_BASE_URL: "http://localhost:8080" });
  assert.equal((await plain.app.fetch(get("/healthz"))).headers.get("strict-transport-security"), null);
});

test("a Host header that could have rewritten the path is a 400, whoever built the Request; a plain one is served", async () => {
  const t = await openTestApp();
  for (const host of ["x/healthz?", "a@b", "x y", "evil\\path"]) {
    const res = await t.app.fetch(get("/healthz", { host }));
    assert.equal(res.status, 400, host);
    assert.equal((await res.json()).error, "invalid_request");
    assert.ok(res.headers.get("x-request-id"));
  }
  const logged = t.log.filter((l) => l.event === "request" && l.fields.status === 400);
  assert.equal(logged.length, 4);
  assert.ok(logged.every((l) => l.fields.path === undefined), "no path that a Host header may have chosen");
  for (const host of ["auth.example.com", "my_service:8080", "[::1]:8080", "example.com."]) {
    assert.equal((await t.app.fetch(get("/healthz", { host }))).status, 200, host);
  }
});

test("unknown path is a 404 JSON error", async () => {
  const { app } = await openTestApp();
  const res = await app.fetch(get("/nope"));
  assert.equal(res.status, 404);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  assert.equal((await res.json()).error, "not_found");
});

test("wrong method is a 405 with Allow", async () => {
  const { app } = await openTestApp();
  const res = await app.fetch(postJson("/healthz", {}));
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "GET, HEAD");
});

test("an unusual method (Deno passes any token) is logged and answered as other, never echoed", async () => {
  const { app, log } = await openTestApp();
  const method = `X${"Y".repeat(5_000)}`;
  const res = await app.fetch(new Request("http://fieldgate.test/healthz", { method }));
  assert.equal(res.status, 405);
  assert.ok(!(await res.text()).includes(method));
  const lines = log.filter((l) => l.event === "request");
  assert.deepEqual(lines.map((l) => [l.fields.method, l.fields.status]), [["other", 405]]);
  assert.ok(!JSON.stringify(log).includes(method));
});

test("every request is logged once with method, path, status and request id, never the query", async () => {
  const { app, log } = await openTestApp();
  await app.fetch(get("/healthz?code=secret-looking"));
  const lines = log.filter((l) => l.event === "request");
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.fields.path, "/healthz");
  assert.equal(lines[0]!.fields.status, 200);
  assert.equal(typeof lines[0]!.fields.request_id, "string");
  assert.ok(!JSON.stringify(log).includes("secret-looking"));
});

test("the request log names the route: a path that matches none is logged as unmatched, never with a token or e-mail in it", async () => {
  const { app, log } = await openTestApp();
  const token = "fgat_01a2037a9c4e8b7d6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c";
  for (const path of [`/oauth/token/${token}`, "/users/alice@example.com", "/users/alice%40example.com"]) {
    assert.equal((await app.fetch(get(path))).status, 404, path);
  }
  // Matched routes, and a known path asked with the wrong method, keep their path.
  await app.fetch(get("/oauth/authorize"));
  await app.fetch(postJson("/healthz", {}));
  const lines = log.filter((l) => l.event === "request");
  assert.deepEqual(lines.map((l) => [l.fields.path, l.fields.status]), [
    ["unmatched", 404], ["unmatched", 404], ["unmatched", 404], ["/oauth/authorize", 400], ["/healthz", 405],
  ]);
  const text = JSON.stringify(log);
  for (const secret of [token, "alice", "example.com"]) assert.ok(!text.includes(secret), secret);
});

test("a sane incoming x-request-id is kept and echoed, a hostile one replaced", async () => {
  const { app } = await openTestApp();
  const kept = await app.fetch(get("/healthz", { "x-request-id": "abc-123" }));
  assert.equal(kept.headers.get("x-request-id"), "abc-123");
  const replaced = await app.fetch(get("/healthz", { "x-request-id": "<script>" }));
  assert.notEqual(replaced.headers.get("x-request-id"), "<script>");
});

/** The address the app recorded for one failed client authentication sent with these headers. */
async function recordedAddress(env: Record<string, string>, headers: Record<string, string>): Promise<string | null> {
  const { app, store } = await openTestApp(env);
  const body = { grant_type: "client_credentials", client_id: "nobody", client_secret: "wrong" };
  assert.equal((await app.fetch(postJson("/oauth/token", body, headers), { remoteAddress: "192.0.2.10" })).status, 401);
  const events = await store.audit.list({});
  return events.find((e) => e.event === "client_auth_failed")?.ip ?? null;
}

const PROXY = { FIELDGATE_TRUST_PROXY: "true" };

const ADDRESS_ROWS: { name: string; env: Record<string, string>; forwarded: string; address: string }[] = [
  { name: "proxy trusted: the right-most entry is the one our proxy appended", env: PROXY, forwarded: "203.0.113.5", address: "203.0.113.5" },
  { name: "proxy trusted: a spoofed first entry does not change the address", env: PROXY, forwarded: "198.51.100.1, 203.0.113.5", address: "203.0.113.5" },
  { name: "proxy trusted: many spoofed entries do not change it either", env: PROXY, forwarded: "1.1.1.1,2.2.2.2 , 203.0.113.5", address: "203.0.113.5" },
  { name: "proxy trusted: an IPv6 right-most entry is kept", env: PROXY, forwarded: "198.51.100.1, 2001:db8::7", address: "2001:db8::7" },
  { name: "proxy trusted: an invalid right-most entry falls back to the socket", env: PROXY, forwarded: "203.0.113.5, not-an-ip", address: "192.0.2.10" },
  { name: "proxy trusted: an empty right-most entry falls back to the socket", env: PROXY, forwarded: "203.0.113.5,", address: "192.0.2.10" },
  { name: "proxy trusted: an address with a port falls back to the socket", env: PROXY, forwarded: "203.0.113.5:4444", address: "192.0.2.10" },
  { name: "proxy trusted: a 10 000-character value falls back to the socket", env: PROXY, forwarded: "9".repeat(10_000), address: "192.0.2.10" },
  { name: "proxy not trusted: the header is ignored", env: {}, forwarded: "203.0.113.5", address: "192.0.2.10" },
];

for (const row of ADDRESS_ROWS) {
  test(`client address, ${row.name}`, async () => {
    assert.equal(await recordedAddress(row.env, { "x-forwarded-for": row.forwarded }), row.address);
  });
}

test("client address: a trusted proxy request without X-Forwarded-For uses the socket address", async () => {
  assert.equal(await recordedAddress(PROXY, {}), "192.0.2.10");
});

test("a database another writer keeps locked answers 503 temporarily_unavailable with Retry-After, not a 500", async () => {
  const t = await openTestApp();
  const { clientId, clientSecret } = await t.seed.client({ grant: "client_credentials" });
  t.store.tokens.issue = async () => {
    throw new StoreBusyError("the database stayed locked by another connection for 5000 ms");
  };
  const res = await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }));
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.equal((await res.json()).error, "temporarily_unavailable");
  assert.ok(t.log.some((l) => l.event === "database_busy"));
  assert.ok(!t.log.some((l) => l.event === "request_failed"));
});

test("a full disk answers 503 with Retry-After, logs the cause without a stack, and /healthz reports it for a while", async () => {
  const t = await openTestApp();
  const { clientId, clientSecret } = await t.seed.client({ grant: "client_credentials" });
  const full = diskFullError();
  t.store.tokens.issue = async () => {
    throw full;
  };
  assert.equal((await t.app.fetch(get("/healthz"))).status, 200, "reads still work: healthy until a write fails");
  const res = await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }));
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "10");
  assert.equal((await res.json()).error, "temporarily_unavailable");
  const line = t.log.find((l) => l.event === "database_unavailable");
  assert.deepEqual({ ...line?.fields, request_id: undefined }, { request_id: undefined, path: "/oauth/token", fault: "full", error: "database or disk is full" });
  assert.ok(!t.log.some((l) => l.event === "request_failed"));
  const health = await t.app.fetch(get("/healthz"));
  assert.equal(health.status, 503);
  assert.deepEqual(await health.json(), { status: "unavailable", database: "full" });
  // Ten seconds without another failure: the next write is what tells whether the disk has room again.
  t.clock.advance(10);
  assert.equal((await t.app.fetch(get("/healthz"))).status, 200);
});

test("exhausted database connections answer 503, log their own event, count in /metrics, and /healthz says degraded", async () => {
  const t = await openTestApp({ FIELDGATE_METRICS_TOKEN: "metrics-token-0123456789" });
  const { clientId, clientSecret } = await t.seed.client({ grant: "client_credentials" });
  t.store.tokens.issue = async () => {
    throw Object.assign(new Error("remaining connection slots are reserved for non-replication superuser connections"), { code: "53300" });
  };
  const res = await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }));
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.ok(t.log.some((l) => l.event === "database_connections_exhausted"));
  assert.ok(!t.log.some((l) => l.event === "database_busy" || l.event === "request_failed"));
  const health = await t.app.fetch(get("/healthz"));
  assert.equal(health.status, 200, "degraded, still in rotation");
  assert.deepEqual(await health.json(), { status: "degraded", database: "connections exhausted" });
  const metrics = await (await t.app.fetch(get("/metrics", { authorization: "Bearer metrics-token-0123456789" }))).text();
  assert.match(metrics, /^fieldgate_store_failures_total\{event="database_connections_exhausted"\} 1$/m);
  t.clock.advance(10);
  assert.deepEqual(await (await t.app.fetch(get("/healthz"))).json(), { status: "ok" });
});
