import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { csrfToken, verifyCsrf } from "../../src/ui/csrf.ts";
import { hmacSha256Base64Url } from "../../src/crypto/hmac.ts";

const deps = { hmac: hmacSha256Base64Url };

const KEY = "fgss_" + "k".repeat(43);

test("csrf: a token verifies for the same cookie, purpose and binding", async () => {
  const token = await csrfToken(deps, KEY, { purpose: "consent", binding: "request-1" });
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyCsrf(deps, KEY, { token, purpose: "consent", binding: "request-1" }), true);
});

const mismatches: Array<{ name: string; key?: string; token?: string; purpose: string; binding?: string }> = [
  { name: "another cookie", key: "fgss_" + "x".repeat(43), purpose: "consent", binding: "request-1" },
  { name: "another purpose", purpose: "signout", binding: "request-1" },
  { name: "another binding", purpose: "consent", binding: "request-2" },
  { name: "no binding", purpose: "consent" },
  { name: "no cookie", key: "", purpose: "consent", binding: "request-1" },
  { name: "an empty token", token: "", purpose: "consent", binding: "request-1" },
];

for (const row of mismatches) {
  test(`csrf: a token does not verify with ${row.name}`, async () => {
    const token = row.token ?? await csrfToken(deps, KEY, { purpose: "consent", binding: "request-1" });
    assert.equal(await verifyCsrf(deps, row.key ?? KEY, { token, purpose: row.purpose, binding: row.binding }), false);
  });
}

test("csrf: tokens are signed with the injected HMAC, keyed by the cookie", async () => {
  const calls: string[] = [];
  const spy = { hmac: async (key: string, message: string) => (calls.push(key), hmacSha256Base64Url(key, message)) };
  const token = await csrfToken(spy, KEY, { purpose: "signin" });
  assert.equal(await verifyCsrf(spy, KEY, { token, purpose: "signin" }), true);
  assert.deepEqual(calls, [KEY, KEY]);
});
