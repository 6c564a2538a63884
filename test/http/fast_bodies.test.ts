// DeferredResponse and BufferedRequest behave like standard bodies for every reader, and readText takes the bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BufferedRequest, DeferredResponse, deferResponseBodies, deferredText, textResponse } from "../../src/http/fast_bodies.ts";
import { readText } from "../../src/http/body.ts";
import { json } from "../../src/http/respond.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function deferred<T>(fn: () => T): T {
  deferResponseBodies(true);
  try {
    return fn();
  } finally {
    deferResponseBodies(false);
  }
}

test("textResponse builds a standard Response unless an adapter deferred bodies", async () => {
  const plain = textResponse("hi", { status: 201 });
  assert.equal(plain instanceof DeferredResponse, false);
  assert.equal(deferredText(plain), undefined);
  assert.equal(await plain.text(), "hi");
  const lazy = deferred(() => json({ a: "é" }, 202, { "x-a": "1" }));
  assert.ok(lazy instanceof DeferredResponse);
  assert.equal(deferredText(lazy), '{"a":"é"}');
  assert.equal(lazy.status, 202);
  assert.equal(lazy.headers.get("x-a"), "1");
  assert.equal(lazy.headers.get("content-type"), "application/json; charset=utf-8");
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
    const response = deferred(() => textResponse('{"a":1}', { status: 200 }));
    assert.deepEqual(await read(response), expected);
  });
}

test("a deferred response is used once read, and the adapter no longer sees its text", async () => {
  const response = deferred(() => textResponse("once", { status: 200 }));
  assert.equal(response.bodyUsed, false);
  assert.equal(await response.text(), "once");
  assert.equal(response.bodyUsed, true);
  assert.equal(deferredText(response), undefined);
  await assert.rejects(response.text(), TypeError);
});

test("readText takes a buffered request's bytes without a stream, once", async () => {
  const request = new BufferedRequest("http://x/a", { method: "POST", headers: { "content-type": "application/json" } }, bytes('{"é":1}'));
  assert.equal(await readText(request, 100), '{"é":1}');
  assert.equal(request.bodyUsed, true);
  await assert.rejects(readText(request, 100), TypeError);
});

test("readText refuses buffered bytes over the limit with 413 and bad UTF-8 with invalid_request", async () => {
  const big = new BufferedRequest("http://x/a", { method: "POST", headers: {} }, bytes("x".repeat(11)));
  await assert.rejects(readText(big, 10), (e: { status?: number }) => e.status === 413);
  const bad = new BufferedRequest("http://x/a", { method: "POST", headers: {} }, new Uint8Array([0xff, 0xfe]));
  await assert.rejects(readText(bad, 10), (e: { code?: string }) => e.code === "invalid_request");
});

test("a buffered request reads like a standard one through text, json, formData, body and clone", async () => {
  const make = (type: string, text: string) => new BufferedRequest("http://x/a", { method: "POST", headers: { "content-type": type } }, bytes(text));
  assert.equal(await make("text/plain", "t").text(), "t");
  assert.deepEqual(await make("application/json", '{"a":2}').json(), { a: 2 });
  assert.equal((await make("application/x-www-form-urlencoded", "a=1&b=2").formData()).get("b"), "2");
  assert.equal(await new Response(make("text/plain", "s").body).text(), "s");
  const original = make("text/plain", "c");
  assert.equal(await original.clone().text(), "c");
  assert.equal(await original.text(), "c");
  assert.equal(original.bodyUsed, true);
});
