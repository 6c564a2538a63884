import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createResponders, html, redirect, standardTextResponse } from "../../src/http/respond.ts";

const { json, jsonNoStore, text } = createResponders(standardTextResponse);

test("json sets the UTF-8 JSON type and serialises the body", async () => {
  const res = json({ a: 1 }, 201, { "x-extra": "1" });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(res.headers.get("x-extra"), "1");
  assert.deepEqual(await res.json(), { a: 1 });
});

test("the standard responders build plain Responses", async () => {
  const res = text("<x/>", { status: 202, headers: { "content-type": "application/xml" } });
  assert.equal(Object.getPrototypeOf(res), Response.prototype);
  assert.equal(Object.getPrototypeOf(json({})), Response.prototype);
  assert.equal(res.status, 202);
  assert.equal(res.headers.get("content-type"), "application/xml");
  assert.equal(await res.text(), "<x/>");
});

test("responders make every answer through the TextResponse they were given", () => {
  const made: { text: string; status: number }[] = [];
  const { json: viaSpy, jsonNoStore: noStoreViaSpy } = createResponders((text, init) => {
    made.push({ text, status: init.status });
    return new Response(text, init);
  });
  viaSpy([1], 201);
  noStoreViaSpy({ a: "b" });
  assert.deepEqual(made, [{ text: "[1]", status: 201 }, { text: '{"a":"b"}', status: 200 }]);
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
