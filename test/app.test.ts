import { test } from "node:test";
import assert from "node:assert/strict";
import { buildTestApp } from "./helpers/test_app.ts";
import { get, postJson } from "./helpers/requests.ts";

test("healthz answers 200 when the database is reachable", async () => {
  const { app } = buildTestApp();
  const res = await app.fetch(get("/healthz"));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
});

test("healthz answers 503 when the database is closed", async () => {
  const { app, store } = buildTestApp();
  await store.close();
  const res = await app.fetch(get("/healthz"));
  assert.equal(res.status, 503);
});

test("unknown path is a 404 JSON error", async () => {
  const { app } = buildTestApp();
  const res = await app.fetch(get("/nope"));
  assert.equal(res.status, 404);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  assert.equal((await res.json()).error, "not_found");
});

test("wrong method is a 405 with Allow", async () => {
  const { app } = buildTestApp();
  const res = await app.fetch(postJson("/healthz", {}));
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "GET, HEAD");
});

test("every request is logged once with method, path, status and request id, never the query", async () => {
  const { app, log } = buildTestApp();
  await app.fetch(get("/healthz?code=secret-looking"));
  const lines = log.filter((l) => l.event === "request");
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.fields.path, "/healthz");
  assert.equal(lines[0]!.fields.status, 200);
  assert.equal(typeof lines[0]!.fields.request_id, "string");
  assert.ok(!JSON.stringify(log).includes("secret-looking"));
});

test("a sane incoming x-request-id is kept and echoed, a hostile one replaced", async () => {
  const { app } = buildTestApp();
  const kept = await app.fetch(get("/healthz", { "x-request-id": "abc-123" }));
  assert.equal(kept.headers.get("x-request-id"), "abc-123");
  const replaced = await app.fetch(get("/healthz", { "x-request-id": "<script>" }));
  assert.notEqual(replaced.headers.get("x-request-id"), "<script>");
});
