// Light responses read like standard ones; an app built with them hands them out, any other app standard ones.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { deferredText, lightTextResponse } from "../../src/adapters/light_response.ts";
import { createResponders } from "../../src/http/respond.ts";
import { createApp } from "../../src/app.ts";
import { silentLog } from "../../src/deps.ts";
import { openTestApp } from "../helpers/test_app.ts";

const light = (text: string, status = 200, headers: Record<string, string> = {}) => lightTextResponse(text, { status, headers });

test("responders over lightTextResponse build light responses whose text, status and headers the listener can read", () => {
  const response = createResponders(lightTextResponse).json({ a: "é" }, 202, { "x-a": "1" });
  assert.equal(deferredText(response), '{"a":"é"}');
  assert.equal(response.status, 202);
  assert.equal(response.headers.get("x-a"), "1");
  assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
});

test("a light response is a Response, and its standard form keeps status, headers and body", async () => {
  const response = light("hi", 201, { "x-b": "2" });
  assert.ok(response instanceof Response);
  const copy = response.clone();
  assert.equal(Object.getPrototypeOf(copy), Response.prototype);
  assert.equal(deferredText(copy), undefined);
  assert.equal(copy.status, 201);
  assert.equal(copy.headers.get("x-b"), "2");
  assert.equal(await copy.text(), "hi");
  assert.equal(deferredText(new Response("x")), undefined);
});

test("app.fetch answers with standard Responses by default, and with light ones when built with lightTextResponse", async () => {
  const plain = await openTestApp();
  const answer = await plain.app.fetch(new Request("http://127.0.0.1/healthz"), { remoteAddress: "127.0.0.1" });
  assert.equal(Object.getPrototypeOf(answer), Response.prototype);
  assert.deepEqual(await answer.json(), { status: "ok" });
  const lit = createApp({ config: plain.config, store: plain.store, log: silentLog, textResponse: lightTextResponse });
  const lightAnswer = await lit.fetch(new Request("http://127.0.0.1/healthz"), { remoteAddress: "127.0.0.1" });
  assert.equal(deferredText(lightAnswer), '{"status":"ok"}');
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
  test(`a light response reads like a standard one through ${name}`, async () => {
    assert.deepEqual(await read(light('{"a":1}')), expected);
  });
}

test("a light response is used once read, and the listener no longer sees its text", async () => {
  const response = light("once");
  assert.equal(response.bodyUsed, false);
  assert.equal(await response.text(), "once");
  assert.equal(response.bodyUsed, true);
  assert.equal(deferredText(response), undefined);
  await assert.rejects(response.text(), TypeError);
});
