import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { memberNames, mediaType, readParams, readText } from "../../src/http/body.ts";
import { HttpError } from "../../src/http/errors.ts";
import { openTestApp } from "../helpers/test_app.ts";
import { clientCredentialsToken } from "../helpers/codes.ts";

function request(body: BodyInit | null, contentType?: string, headers: Record<string, string> = {}): Request {
  return new Request("http://test/x", {
    method: "POST",
    body,
    headers: contentType ? { "content-type": contentType, ...headers } : headers,
  });
}

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HttpError, String(error));
    return error;
  }
  assert.fail("expected an HttpError");
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
  { name: "unsupported Content-Type", body: "a=b", type: "text/plain", status: 415, code: "unsupported_media_type" },
  { name: "missing Content-Type", body: "a=b", status: 415, code: "unsupported_media_type" },
  { name: "invalid JSON", body: "{", type: "application/json", status: 400, code: "bad_request" },
  { name: "a JSON array", body: "[]", type: "application/json", status: 400, code: "bad_request" },
  { name: "a JSON string", body: '"x"', type: "application/json", status: 400, code: "bad_request" },
  { name: "a non-string JSON value", body: '{"client_id":1}', type: "application/json", status: 400, code: "bad_request" },
  { name: "a repeated form parameter", body: "a=1&a=2", type: "application/x-www-form-urlencoded", status: 400, code: "bad_request" },
  { name: "a repeated JSON member", body: '{"a":"1","a":"2"}', type: "application/json", status: 400, code: "bad_request" },
  { name: "a JSON member repeated empty", body: '{"a":"","a":"2"}', type: "application/json", status: 400, code: "bad_request" },
  { name: "a JSON member repeated under an escaped name", body: '{"a_b":"1","a\\u005fb":"2"}', type: "application/json", status: 400, code: "bad_request" },
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
  assert.equal(error.code, "bad_request");
});

test("readParams refuses a repeated recognized JSON member and ignores repeats of the others", async () => {
  const options = { recognized: ["client_id", "client_secret"] };
  const repeated = '{"client_id":"bogus","client_secret":"s","client_id":"real"}';
  const error = await refusal(readParams(request(repeated, "application/json"), 1024, options));
  assert.equal(error.code, "bad_request");
  assert.match(error.description, /client_id is repeated/);
  const params = await readParams(request('{"x":1,"client_id":"a","x":{"client_id":"b"}}', "application/json"), 1024, options);
  assert.deepEqual({ ...params }, { client_id: "a" });
});

test("readParams answers JSON bodies nested 100 000 levels with bad_request or ignores the member, never overflowing", async () => {
  const deep = (open: string, close: string) => open.repeat(100_000) + "1" + close.repeat(100_000);
  const options = { recognized: ["client_id"] };
  const rows = [`{"client_id":${deep("[", "]")}}`, `{"client_id":${deep('{"a":', "}")}}`, deep("[", "]")];
  for (const body of rows) {
    const error = await refusal(readParams(request(body, "application/json"), 1_048_576, options));
    assert.equal(error.code, "bad_request");
  }
  const ignored = await readParams(request(`{"client_id":"a","extra":${deep("[", "]")}}`, "application/json"), 1_048_576, options);
  assert.deepEqual({ ...ignored }, { client_id: "a" });
});

test("memberNames lists top-level names only, not names or strings inside values", () => {
  const text = '{ "a" : "b,\\"c\\":", "d":{"a":1,"e":[{"f":"g"}]}, "h" :["i",{"j":2}], "k\\u0041":null }';
  assert.deepEqual(memberNames(text), ["a", "d", "h", "kA"]);
  assert.deepEqual(memberNames("{}"), []);
});

test("memberNames agrees with JSON.parse on every object JSON.stringify writes", () => {
  fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), (object, indented) => {
    const text = JSON.stringify(object, null, indented ? 2 : undefined);
    assert.deepEqual(memberNames(text), Object.keys(JSON.parse(text)));
  }));
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

test("readText refuses invalid UTF-8 as a bad request", async () => {
  const error = await refusal(readText(request(new Uint8Array([0x7b, 0xff, 0x7d]), "application/json"), 100));
  assert.equal(error.code, "bad_request");
  assert.equal(error.status, 400);
});

/** A request whose body sends `first`, then fails as a dropped connection does (Deno: BadResource). */
function droppedMidBody(path: string, first: string, headers: Record<string, string>): Request {
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("Cannot read request body as underlying resource unavailable"));
      sent = true;
      controller.enqueue(new TextEncoder().encode(first));
    },
  });
  return new Request(`http://fieldgate.test${path}`, { method: "POST", body: stream, headers, duplex: "half" } as RequestInit);
}

test("readText turns a body the client stopped sending into a bad request, not a server error", async () => {
  const error = await refusal(readText(droppedMidBody("/x", '{"grant_type":', {}), 1000));
  assert.equal(error.status, 400);
  assert.equal(error.code, "bad_request");
});

test("a client that drops mid-body gets 400 from the token endpoint and GraphQL, and nothing is logged as failed", async () => {
  const t = await openTestApp();
  const json = { "content-type": "application/json" };
  const token = await t.app.fetch(droppedMidBody("/oauth/token", '{"grant_type":', json));
  assert.equal(token.status, 400);
  assert.equal((await token.json()).error, "invalid_request");
  const { tokens } = await clientCredentialsToken(t);
  const graphql = await t.app.fetch(droppedMidBody("/graphql", '{"query":', { ...json, authorization: `Bearer ${tokens.access_token}` }));
  assert.equal(graphql.status, 400);
  assert.ok(!t.log.some((l) => l.event === "request_failed"));
});

test("readText gives up on a body that does not arrive within its deadline (408) and cancels the stream", async () => {
  let cancelled = false;
  const trickle = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"grant_type"'));
    },
    cancel() {
      cancelled = true;
    },
  });
  const req = new Request("http://test/x", { method: "POST", body: trickle, duplex: "half" } as RequestInit);
  // The body never ends: only the 50 ms deadline can produce this 408.
  const error = await refusal(readText(req, 1000, 50));
  assert.equal(error.status, 408);
  assert.equal(error.code, "request_timeout");
  assert.equal(cancelled, true);
});

test("readText gives up on a body of declared length that does not arrive within its deadline (408)", async () => {
  const trickle = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"grant_type"'));
    },
  });
  const req = new Request("http://test/x", {
    method: "POST", body: trickle, duplex: "half", headers: { "content-length": "100" },
  } as RequestInit);
  // Read whole because its length is declared, and it never ends: only the 50 ms deadline can produce this 408.
  const error = await refusal(readText(req, 1000, 50));
  assert.equal(error.status, 408);
  assert.equal(error.code, "request_timeout");
});

test("readText reads a body of declared length that arrives after a few turns", async () => {
  const slow = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      controller.enqueue(new TextEncoder().encode('{"a":"b"}'));
      controller.close();
    },
  });
  const req = new Request("http://test/x", {
    method: "POST", body: slow, duplex: "half", headers: { "content-length": "9" },
  } as RequestInit);
  assert.equal(await readText(req, 1000, 5_000), '{"a":"b"}');
});
