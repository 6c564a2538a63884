// Deferred responses read like standard ones, and the app hands them out only to an adapter that asked.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { deferredText, standardResponse, textResponse } from "../../src/http/fast_bodies.ts";
import { json } from "../../src/http/respond.ts";
import { openTestApp } from "../helpers/test_app.ts";

test("the respond helpers build deferred responses whose text, status and headers an adapter can read", () => {
  const response = json({ a: "é" }, 202, { "x-a": "1" });
  assert.equal(deferredText(response), '{"a":"é"}');
  assert.equal(response.status, 202);
  assert.equal(response.headers.get("x-a"), "1");
  assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
});

test("standardResponse gives a plain Response with the same status, headers and body", async () => {
  const plain = standardResponse(textResponse("hi", { status: 201, headers: { "x-b": "2" } }));
  assert.equal(Object.getPrototypeOf(plain), Response.prototype);
  assert.equal(deferredText(plain), undefined);
  assert.equal(plain.status, 201);
  assert.equal(plain.headers.get("x-b"), "2");
  assert.equal(await plain.text(), "hi");
  const other = new Response("x");
  assert.equal(standardResponse(other), other);
});

test("app.fetch answers with plain Responses unless the caller asked for deferred bodies", async () => {
  const t = await openTestApp();
  const plain = await t.app.fetch(new Request("http://127.0.0.1/healthz"), { remoteAddress: "127.0.0.1" });
  assert.equal(Object.getPrototypeOf(plain), Response.prototype);
  assert.equal(deferredText(plain), undefined);
  assert.deepEqual(await plain.json(), { status: "ok" });
  const deferred = await t.app.fetch(new Request("http://127.0.0.1/healthz"), { remoteAddress: "127.0.0.1", deferredBodies: true });
  assert.equal(deferredText(deferred), '{"status":"ok"}');
});

const readers: { name: string; read: (r: Response) => Promise<unknown>; expected: unknown }[] = [
  { name: "text", read: (r) => r.text(), expected: '{"a":1}' },
  { name: "json", read: (r) => r.json(), expected: { a: 1 } },
  { name: "arrayBuffer", read: async (r) => new TextDecoder().decode(await r.arrayBuffer()), expected: '{"a":1}' },
  { name: "bytes", read: async (r) => new TextDecoder().decode(await r.bytes()), expected: '{"a":1}' },
  { name: "blob", read: async (r) => (await r.blob()).text(), expected: '{"a":1}' },
  { name: "body stream", read: (r) => new Response(r.body).text(), expected: '{"a":1}' },
  { name: "clone", read: (r) => r.clone().json(), expected: { a: 1 } },
];

for (const { name, read, expected } of readers) {
  test(`a deferred response reads like a standard one through ${name}`, async () => {
    assert.deepEqual(await read(textResponse('{"a":1}', { status: 200 })), expected);
  });
}

test("a deferred response is used once read, and the adapter no longer sees its text", async () => {
  const response = textResponse("once", { status: 200 });
  assert.equal(response.bodyUsed, false);
  assert.equal(await response.text(), "once");
  assert.equal(response.bodyUsed, true);
  assert.equal(deferredText(response), undefined);
  await assert.rejects(response.text(), TypeError);
});
