// What an embedder meets calling app.fetch directly: no adapter in front, possibly no address, their own log and
// their own shutdown.
import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "./helpers/test_app.ts";
import { postJson } from "./helpers/requests.ts";
import { createApp } from "../src/app.ts";
import { openStore } from "../src/store/sqlite/store.ts";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const NODE = fileURLToPath(new URL("../node_modules/.bin/node", import.meta.url));
const MOD = new URL("../src/mod.ts", import.meta.url).href;

function ccBody(client: { clientId: string; clientSecret: string }) {
  return { grant_type: "client_credentials", client_id: client.clientId, client_secret: client.clientSecret };
}

test("app.close() lets requests in flight finish, answers later ones 503, then closes the store", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const inFlight = Array.from({ length: 10 }, () => t.app.fetch(postJson("/oauth/token", ccBody(client))));
  const closing = t.app.close();
  const late = await t.app.fetch(postJson("/oauth/token", ccBody(client)));
  assert.equal(late.status, 503);
  assert.equal((await late.json()).error, "temporarily_unavailable");
  assert.ok(late.headers.get("retry-after"));
  const answers = await Promise.all(inFlight);
  assert.deepEqual(answers.map((r) => r.status), Array(10).fill(200));
  await closing;
  assert.equal(await t.store.ping(), false, "the store is closed once close() resolves");
  await t.app.close(); // twice is harmless
  assert.equal(t.log.filter((l) => l.event === "request_failed").length, 0);
});

test("an embedder's BcryptService checks imported digests and app.close() ends it once, before the store", async () => {
  const t = await openTestApp();
  const events: string[] = [];
  const verify = async () => false;
  const store = { ...t.store, close: async () => void events.push("store closed") };
  const app = createApp({ config: t.config, store, bcrypt: { verify, close: async () => void events.push("bcrypt closed") } });
  assert.equal(app.deps.bcrypt, verify);
  await app.close();
  await app.close();
  assert.deepEqual(events, ["bcrypt closed", "store closed"]);
});

test("a store closed under the app answers 503, not a 500 logged as a bug", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  await t.store.close();
  const res = await t.app.fetch(postJson("/oauth/token", ccBody(client)));
  assert.equal(res.status, 503);
  assert.equal((await res.json()).error, "temporarily_unavailable");
  assert.equal(t.log.filter((l) => l.event === "request_failed").length, 0);
  assert.equal(t.log.filter((l) => l.event === "database_closed").length, 1);
});

test("a log function that throws or rejects costs the line, never the answer", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  let calls = 0;
  for (const log of [() => { calls++; throw new Error("sink down"); }, () => { calls++; return Promise.reject(new Error("sink down")); }]) {
    const app = createApp({ config: t.config, store: t.store, log: log as () => void });
    const res = await app.fetch(postJson("/oauth/token", ccBody(client)), { remoteAddress: "192.0.2.5" });
    assert.equal(res.status, 200);
    assert.match((await res.json()).access_token, /^fgat_/);
  }
  assert.ok(calls >= 4, "the sink was called (request and audit lines)");
});

test("HEAD answers carry no body when app.fetch is called directly", async () => {
  const t = await openTestApp();
  for (const path of ["/healthz", "/", "/.well-known/oauth-authorization-server"]) {
    const res = await t.app.fetch(new Request(`http://fieldgate.test${path}`, { method: "HEAD" }));
    const get = await t.app.fetch(new Request(`http://fieldgate.test${path}`));
    assert.equal(res.status, 200, path);
    assert.equal(res.body, null, path);
    // RFC 9110 §8.6: a Content-Length on a HEAD answer is the one GET sends, never a 0 for an empty body.
    assert.equal(res.headers.get("content-length"), String((await get.arrayBuffer()).byteLength), path);
    assert.ok(res.headers.get("content-type"), path);
    assert.ok(res.headers.get("x-request-id"), path);
  }
});

test("a body already read by the embedder's middleware is a 400 invalid_request, not a 500", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const used = postJson("/oauth/token", ccBody(client));
  await used.text();
  const locked = postJson("/oauth/token", ccBody(client));
  locked.body!.getReader();
  for (const request of [used, locked]) {
    const res = await t.app.fetch(request);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "invalid_request");
  }
  assert.equal(t.log.filter((l) => l.event === "request_failed").length, 0);
});

test("openStore on a path whose directory is missing names the path and the likely cause", () => {
  assert.throws(() => openStore("/nonexistent-dir-fieldgate/fg.db"), (error: Error) =>
    /cannot open database \/nonexistent-dir-fieldgate\/fg\.db: .*directory exist/.test(error.message));
});

test("the package entry point serves the README's embedding: app, address, maintenance, close", async () => {
  const fieldgate = await import("../src/mod.ts");
  const config = fieldgate.loadConfig({ FIELDGATE_BASE_URL: "https://auth.example.com" });
  const store = fieldgate.openStore(":memory:");
  const lines: string[] = [];
  const log = (event: string) => void lines.push(event);
  const app = fieldgate.createApp({ config, store, log });
  const maintenance = fieldgate.startMaintenance({ store, config, clock: Date.now, log });
  const res = await app.fetch(new Request("https://auth.example.com/healthz"), { remoteAddress: "203.0.113.9" });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
  maintenance.stop();
  await app.close();
  assert.equal(await store.ping(), false);
  assert.ok(lines.includes("request"));
  assert.ok(!lines.includes("client_address_unknown"));
});

test("the package entry point loads no PostgreSQL module until openPostgresStore is called", () => {
  // A process of its own, which records every module it resolves: this test file may have loaded them already.
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); loaded.push(found.url); return found; } });
    const postgres = () => loaded.filter((url) => /\\/postgres\\//.test(url));
    const fieldgate = await import(${JSON.stringify(MOD)});
    const store = fieldgate.openStore(":memory:");
    await fieldgate.createApp({ config: fieldgate.loadConfig({ FIELDGATE_BASE_URL: "https://auth.example.com" }), store }).close();
    const onSqlite = postgres();
    await fieldgate.openPostgresStore("postgres://fg@127.0.0.1:1/fieldgate").then((s) => s.close(), () => {});
    console.log(JSON.stringify({ onSqlite, onUrl: postgres() }));
    process.exit(0);
  `;
  const child = spawnSync(NODE, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(child.status, 0, child.stderr);
  const { onSqlite, onUrl } = JSON.parse(child.stdout) as { onSqlite: string[]; onUrl: string[] };
  assert.deepEqual(onSqlite, []);
  assert.ok(onUrl.some((url) => url.endsWith("/src/store/postgres/store.ts")), onUrl.join("\n"));
});
