import { test } from "node:test";
import assert from "node:assert/strict";
import { mediaType, readParams, readText } from "../../src/http/body.ts";
import { OAuthError } from "../../src/oauth/errors.ts";

function request(body: BodyInit | null, contentType?: string, headers: Record<string, string> = {}): Request {
  return new Request("http://test/x", {
    method: "POST",
    body,
    headers: contentType ? { "content-type": contentType, ...headers } : headers,
  });
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OAuthError, String(error));
    return error;
  }
  assert.fail("expected an OAuthError");
}

test("mediaType drops parameters and case", () => {
  assert.equal(mediaType(request("", "Application/JSON; charset=UTF-8")), "application/json");
  assert.equal(mediaType(request("")), "text/plain");
});

test("readParams reads the spec's JSON object", async () => {
  const params = await readParams(request('{"grant_type":"client_credentials","client_id":"a"}', "application/json"), 1024);
  assert.equal(params.grant_type, "client_credentials");
  assert.equal(params.client_id, "a");
});

test("readParams reads RFC 6749 form bodies and drops empty values (RFC 6749 §3.1)", async () => {
  const params = await readParams(request("grant_type=refresh_token&scope=&x=%20y", "application/x-www-form-urlencoded"), 1024);
  assert.equal(params.grant_type, "refresh_token");
  assert.equal("scope" in params, false);
  assert.equal(params.x, " y");
});

test("readParams keeps __proto__ a plain key", async () => {
  const params = await readParams(request('{"__proto__":"x","a":"b"}', "application/json"), 1024);
  assert.equal(Object.getPrototypeOf(params), null);
  assert.equal(params.a, "b");
});

const refused: { name: string; body: string; type?: string; status: number; code: string }[] = [
  { name: "unsupported Content-Type", body: "a=b", type: "text/plain", status: 415, code: "invalid_request" },
  { name: "missing Content-Type", body: "a=b", status: 415, code: "invalid_request" },
  { name: "invalid JSON", body: "{", type: "application/json", status: 400, code: "invalid_request" },
  { name: "a JSON array", body: "[]", type: "application/json", status: 400, code: "invalid_request" },
  { name: "a JSON string", body: '"x"', type: "application/json", status: 400, code: "invalid_request" },
  { name: "a non-string JSON value", body: '{"client_id":1}', type: "application/json", status: 400, code: "invalid_request" },
  { name: "a repeated form parameter", body: "a=1&a=2", type: "application/x-www-form-urlencoded", status: 400, code: "invalid_request" },
];

for (const row of refused) {
  test(`readParams refuses ${row.name}`, async () => {
    const error = await refusal(readParams(request(row.body, row.type), 1024));
    assert.equal(error.status, row.status);
    assert.equal(error.code, row.code);
  });
}

test("readParams with recognized names ignores unknown malformed ones (RFC 6749 §3.2)", async () => {
  const options = { recognized: ["client_id"] };
  const params = await readParams(request('{"client_id":"a","extra":[1]}', "application/json"), 1024, options);
  assert.deepEqual({ ...params }, { client_id: "a" });
  const error = await refusal(readParams(request('{"client_id":{}}', "application/json"), 1024, options));
  assert.equal(error.code, "invalid_request");
});

test("readText refuses a declared Content-Length over the limit before reading", async () => {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(10));
    },
  });
  const req = new Request("http://test/x", {
    method: "POST",
    body: stream,
    headers: { "content-length": "5000" },
    duplex: "half",
  } as RequestInit);
  const error = await refusal(readText(req, 100));
  assert.equal(error.status, 413);
  assert.ok(pulled <= 1, `pulled ${pulled} chunks`);
});

test("readText stops an endless body as soon as it crosses the limit", async () => {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(64));
    },
  });
  const req = new Request("http://test/x", { method: "POST", body: stream, duplex: "half" } as RequestInit);
  const error = await refusal(readText(req, 1000));
  assert.equal(error.status, 413);
  assert.ok(pulled < 40, `pulled ${pulled} chunks`);
});

test("readText refuses invalid UTF-8 with invalid_request", async () => {
  const error = await refusal(readText(request(new Uint8Array([0x7b, 0xff, 0x7d]), "application/json"), 100));
  assert.equal(error.code, "invalid_request");
  assert.equal(error.status, 400);
});
