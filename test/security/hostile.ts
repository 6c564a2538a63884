// Shared generators and invariants for the hostile-input property tests (not a test file itself).
import assert from "node:assert/strict";
import fc from "fast-check";
import type { TestApp } from "../helpers/test_app.ts";
import { BASE, get } from "../helpers/requests.ts";
import { RESPONSE_PARAMETERS } from "../../src/oauth/authorize_request.ts";

/** Runs per property: enough to hit every generator branch many times, small enough to keep the suite fast. */
export const RUNS = Number(globalThis.process?.env?.FIELDGATE_FUZZ_RUNS ?? 300);

export const REDIRECT_URI = "https://client.example/cb";

/** Values an attacker would try in any parameter. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "", " ", "\u0000", "a\r\nSet-Cookie: x=1", "x\r\nLocation: https://evil.example/", "%0d%0aX-Injected:1",
    "<script>alert(1)</script>", "\"'><img src=x onerror=alert(1)>", "__proto__", "constructor", "null",
    "../../etc/passwd", "fields:read fields:write", "fields:read\u0000", "\ud800", "\uffff", "\u202e", "ǅ",
    "fgat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "1e309", "-1", "0x10",
  ),
  fc.integer({ min: 1_000, max: 70_000 }).map((n) => "A".repeat(n)),
);

/** Redirect URIs that look like the registered one but are not (RFC 6749 §3.1.2.3: exact match only). */
export const lookalikeRedirect: fc.Arbitrary<string> = fc.constantFrom(
  REDIRECT_URI,
  "https://client.example/cb/",
  "https://client.example/cb?x=1",
  "https://client.example/cb#frag",
  "https://client.example/CB",
  "https://CLIENT.example/cb",
  "http://client.example/cb",
  "https://client.example:443/cb",
  "https://client.example/cb/../evil",
  "https://client.example/cb%2f..%2fevil",
  "https://client.example@evil.example/cb",
  "https://evil.example/cb?https://client.example/cb",
  "https://client.example.evil.example/cb",
  "https://clіent.example/cb", // Cyrillic i
  "https://client.ехample/cb", // Cyrillic e and x
  "https://ｃｌｉｅｎｔ.example/cb", // fullwidth
  "https://client.example/cb\u200b",
  "https://client.example/cb\r\nLocation: https://evil.example/",
  "https://client.example/cb%0d%0aLocation:%20https://evil.example/",
  "//evil.example/cb",
  "javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  " https://client.example/cb",
);

/** Form or JSON parameter names the endpoints read, plus junk. */
export const paramName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "grant_type", "client_id", "client_secret", "code", "redirect_uri", "refresh_token", "scope", "token",
    "token_type_hint", "code_verifier", "state", "response_type", "code_challenge", "code_challenge_method",
    "username", "password", "csrf", "csrf_token", "query", "variables", "operationName", "__proto__",
  ),
  fc.string({ maxLength: 12 }),
);

export const contentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined, "application/json", "application/x-www-form-urlencoded", "text/plain", "APPLICATION/JSON",
  "application/json; charset=utf-16", "multipart/form-data; boundary=x", "application/graphql-response+json",
  "application/x-www-form-urlencoded; charset=iso-8859-1", "application/json, text/plain", "",
);

/** A JSON value nested `depth` levels deep, the classic parser stack-exhaustion probe. */
export const deepJson: fc.Arbitrary<string> = fc.integer({ min: 1, max: 20_000 }).chain((depth) =>
  fc.constantFrom("[", '{"a":').map((open) => {
    const close = open === "[" ? "]" : "}";
    return open.repeat(depth) + "1" + close.repeat(depth);
  })
);

/** Pairs of name and value, names possibly repeated (duplicated parameters, RFC 6749 §3.2). */
export const pairs = (values: fc.Arbitrary<string>) =>
  fc.array(fc.tuple(paramName, values), { maxLength: 8 });

/** A request body: form, JSON object, JSON of the wrong shape, deep JSON, garbage text or invalid UTF-8 bytes. */
export function hostileBody(values: fc.Arbitrary<string>): fc.Arbitrary<string | Uint8Array> {
  return fc.oneof(
    pairs(values).map((p) => new URLSearchParams(p).toString()),
    pairs(values).map((p) => JSON.stringify(Object.fromEntries(p))),
    fc.dictionary(paramName, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).map((o) => JSON.stringify(o)),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? "null"),
    deepJson,
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }),
    // Invalid UTF-8 inside an otherwise well-formed JSON object.
    fc.uint8Array({ minLength: 1, maxLength: 20 }).map((junk) =>
      concatBytes(new TextEncoder().encode('{"grant_type":"'), Uint8Array.from(junk, (b) => b | 0x80), new TextEncoder().encode('"}'))
    ),
  );
}

function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A query string from hostile pairs, possibly with raw percent-encoded CR/LF and invalid escapes. */
export const hostileQuery: fc.Arbitrary<string> = fc.oneof(
  pairs(hostileString).map((p) => new URLSearchParams(p).toString()),
  fc.constantFrom("%", "%zz", "a=%ff%fe", "a=%0d%0a", "&&&==", "a=1&a=2&a=3", "access_token=fgat_x", "a[b]=1"),
);

/** Builds a POST; header values that Headers would reject (CR/LF) are generated only inside bodies. */
export function post(path: string, body: string | Uint8Array, type: string | undefined, headers: Record<string, string> = {}, query = ""): Request {
  const h = new Headers(headers);
  if (type !== undefined) h.set("content-type", type);
  return new Request(`${BASE}${path}${query ? `?${query}` : ""}`, { method: "POST", headers: h, body: body as BodyInit });
}

/** Parses a JSON body or fails the property with a readable message. */
export async function jsonBody(res: Response): Promise<Record<string, unknown>> {
  const type = res.headers.get("content-type") ?? "";
  assert.match(type, /^application\/(graphql-response\+)?json/, `expected JSON, got ${type} (${res.status})`);
  const body: unknown = JSON.parse(await res.text());
  assert.ok(typeof body === "object" && body !== null && !Array.isArray(body), "JSON body must be an object");
  return body as Record<string, unknown>;
}

/** RFC 6749 §5.2 error shape: never a 5xx, never a redirect, a JSON object with a string `error` on failure. */
export async function assertOAuthJson(res: Response): Promise<void> {
  assert.ok(res.status < 500, `5xx: ${res.status}`);
  assert.equal(res.headers.get("location"), null, "an API endpoint never redirects");
  const body = await jsonBody(res);
  if (res.status >= 400) {
    assert.equal(typeof body.error, "string", `error body without error code: ${JSON.stringify(body)}`);
    assert.match(body.error as string, /^[a-z_]+$/);
  }
}

/**
 * Where a browser-facing response may send the user: our own pages, or the exact registered redirect URI when
 * `registered` is given (undefined: no external target at all).
 */
export function assertSafeLocation(location: string, registered: string | undefined = REDIRECT_URI): void {
  assert.ok(!/[\r\n]/.test(location), "Location carries CR/LF");
  if (location.startsWith("/") && !location.startsWith("//") && !location.startsWith("/\\")) return;
  const url = new URL(location);
  if (url.origin === new URL(BASE).origin) return;
  // The registered URI byte for byte, then only the parameters an authorization response adds (RFC 6749 §3.1.2):
  // a lookalike (":443", "/cb/", userinfo) or an extra parameter of the request's choosing is not safe.
  assert.ok(registered !== undefined, `redirect off-site with no registered URI: ${location}`);
  const separator = registered.includes("?") ? "&" : "?";
  assert.ok(location === registered || location.startsWith(registered + separator), `redirect to an unregistered URI: ${location}`);
  const added = new URLSearchParams(location.slice(registered.length + 1));
  for (const name of added.keys()) assert.ok(RESPONSE_PARAMETERS.has(name), `redirect adds "${name}": ${location}`);
}

/** An HTML page (error or form) or a safe redirect; never JSON, never a 5xx. */
export async function assertHtmlOrSafeRedirect(res: Response, registered: string | undefined = REDIRECT_URI): Promise<void> {
  assert.ok(res.status < 500, `5xx: ${res.status}`);
  const location = res.headers.get("location");
  if (res.status >= 300 && res.status < 400) {
    assert.ok(location, "redirect without Location");
    assertSafeLocation(location, registered);
    return;
  }
  assert.equal(location, null, "Location on a non-redirect");
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/, `expected HTML (${res.status})`);
  assert.match(await res.text(), /<html|<!doctype/i);
}

/** After a batch of hostile requests: the app still answers and the database is sound. */
export async function assertStillHealthy(t: TestApp): Promise<void> {
  const res = await t.app.fetch(get("/healthz"));
  assert.equal(res.status, 200);
  assert.deepEqual(await t.store.maintenance?.integrityCheck() ?? ["ok"], ["ok"], "a SQLite file stays sound; PostgreSQL checks itself");
}

/** Fails the test if the app ever logged an unexpected failure (the 500 path) while fuzzing. */
export function assertNoServerErrors(t: TestApp): void {
  const failures = t.log.filter((l) => l.event === "request_failed");
  assert.equal(failures.length, 0, `request_failed logged: ${JSON.stringify(failures[0]?.fields)}`);
}
