// ParsedRequest (the Node adapter's Request) answers like the standard Request built from the same parts: headers, body readers, clone, once-only bodies.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ParsedRequest } from "../../src/adapters/parsed_request.ts";
import { readText } from "../../src/http/body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const post = (type: string, text: string) => new ParsedRequest("POST", "http://x/a", ["Content-Type", type], bytes(text));

test("headers.get and has fold names and join repeated fields exactly like Headers", () => {
  const raw = ["Host", "x", "X-Forwarded-For", "1.1.1.1", "x-forwarded-for", "2.2.2.2", "Content-Type", "application/json"];
  const request = new ParsedRequest("GET", "http://x/", raw);
  const standard = new Headers([["Host", "x"], ["X-Forwarded-For", "1.1.1.1"], ["x-forwarded-for", "2.2.2.2"], ["Content-Type", "application/json"]]);
  for (const name of ["host", "HOST", "x-forwarded-for", "content-type", "authorization"]) {
    assert.equal(request.headers.get(name), standard.get(name), name);
    assert.equal(request.headers.has(name), standard.has(name), name);
  }
  assert.equal(request.headers.get("x-forwarded-for"), "1.1.1.1, 2.2.2.2");
  assert.deepEqual([...request.headers], [...standard]);
});

test("for any header list the parser can deliver, get and has agree with a standard Request", () => {
  // Random names almost never collide, so a few real ones in both cases come often: repeated fields and
  // case-insensitive lookup are what the property is about.
  const token = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/),
    fc.constantFrom("Accept", "accept", "ACCEPT", "X-Forwarded-For", "x-forwarded-for", "Authorization", "authorization", "Host"),
  );
  // Field values as llhttp hands them over: visible ASCII and spaces inside, no surrounding whitespace.
  const value = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,20}[\x21-\x7e])?$/);
  fc.assert(fc.property(fc.array(fc.tuple(token, value), { maxLength: 12 }), fc.array(token, { maxLength: 6 }), (pairs, probes) => {
    const request = new ParsedRequest("GET", "http://x/", pairs.flat());
    const standard = new Request("http://x/", { headers: pairs });
    for (const name of [...pairs.map(([n]) => n), ...probes]) {
      assert.equal(request.headers.get(name), standard.headers.get(name));
      assert.equal(request.headers.has(name), standard.headers.has(name));
    }
  }));
});

test("after a mutation the real Headers answers, so get sees the change", () => {
  const request = new ParsedRequest("GET", "http://x/", ["Accept", "text/html"]);
  request.headers.set("accept", "application/json");
  request.headers.append("x-extra", "1");
  assert.equal(request.headers.get("accept"), "application/json");
  assert.equal(request.headers.has("x-extra"), true);
  request.headers.delete("x-extra");
  assert.equal(request.headers.has("x-extra"), false);
});

test("method, url and the standard-only members come from the parts given", () => {
  const request = new ParsedRequest("DELETE", "http://x/a?b=1", []);
  assert.equal(request.method, "DELETE");
  assert.equal(request.url, "http://x/a?b=1");
  assert.equal(request.signal.aborted, false);
  assert.equal(request.redirect, "follow");
  assert.equal(Object.prototype.toString.call(request), "[object Request]");
  assert.equal(request.body, null);
});

test("readText reads the bytes through body, once", async () => {
  const request = post("application/json", '{"é":1}');
  assert.equal(await readText(request, 100), '{"é":1}');
  assert.equal(request.bodyUsed, true);
  await assert.rejects(readText(request, 100), (e: { code?: string }) => e.code === "bad_request");
  await assert.rejects(request.text(), TypeError);
  assert.throws(() => request.clone(), TypeError);
});

test("readText refuses bytes over the limit with 413 and bad UTF-8 as a bad request", async () => {
  const big = new ParsedRequest("POST", "http://x/a", [], bytes("x".repeat(11)));
  await assert.rejects(readText(big, 10), (e: { status?: number }) => e.status === 413);
  const bad = new ParsedRequest("POST", "http://x/a", [], new Uint8Array([0xff, 0xfe]));
  await assert.rejects(readText(bad, 10), (e: { code?: string }) => e.code === "bad_request");
  assert.equal(await readText(new ParsedRequest("POST", "http://x/a", []), 10), "");
});

test("the body reads like a standard one through text, json, formData, bytes, body and clone", async () => {
  assert.equal(await post("text/plain", "t").text(), "t");
  assert.deepEqual(await post("application/json", '{"a":2}').json(), { a: 2 });
  assert.equal((await post("application/x-www-form-urlencoded", "a=1&b=2").formData()).get("b"), "2");
  assert.deepEqual(await post("text/plain", "by").bytes(), bytes("by"));
  assert.equal(await new Response(post("text/plain", "s").body).text(), "s");
  const original = post("text/plain", "c");
  assert.equal(await original.clone().text(), "c");
  assert.equal(original.bodyUsed, false);
  assert.equal(await original.text(), "c");
  assert.equal(original.bodyUsed, true);
  // A body read through a standard accessor cannot be read again by readText.
  await assert.rejects(readText(original, 10), (e: { code?: string }) => e.code === "bad_request");
});

test("ParsedRequest has every member of the DOM lib's Request (tsc checks this assignment)", () => {
  const request: Request = new ParsedRequest("GET", "http://x/", []);
  assert.equal(request.method, "GET");
  assert.equal(request.bodyUsed, false);
});
