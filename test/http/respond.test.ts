import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { html, json, jsonNoStore, redirect } from "../../src/http/respond.ts";

test("json sets the UTF-8 JSON type and serialises the body", async () => {
  const res = json({ a: 1 }, 201, { "x-extra": "1" });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(res.headers.get("x-extra"), "1");
  assert.deepEqual(await res.json(), { a: 1 });
});

test("jsonNoStore forbids caching (RFC 6749 §5.1)", () => {
  const res = jsonNoStore({});
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("pragma"), "no-cache");
});

test("html pages carry the anti-framing, referrer and caching headers", () => {
  const res = html("<p>x</p>");
  assert.match(res.headers.get("content-type") ?? "", /^text\/html; charset=utf-8/);
  assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  assert.equal(res.headers.get("cache-control"), "no-store");
});

test("redirect sets Location, no body, no caching and no referrer", async () => {
  const res = redirect("https://client.example/cb?code=x", 303);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "https://client.example/cb?code=x");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  assert.equal(await res.text(), "");
});
