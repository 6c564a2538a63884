// DeferredResponse behaves like a standard body for every reader (ParsedRequest: parsed_request.test.ts).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { DeferredResponse, deferResponseBodies, deferredText, textResponse } from "../../src/http/fast_bodies.ts";
import { json } from "../../src/http/respond.ts";

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
