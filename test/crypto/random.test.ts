import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { randomId, randomToken, TOKEN_PREFIX } from "../../src/crypto/random.ts";
import { cryptoRandom } from "../../src/deps.ts";
import { decodeBase64Url } from "../../src/crypto/base64url.ts";

for (const kind of Object.keys(TOKEN_PREFIX) as (keyof typeof TOKEN_PREFIX)[]) {
  test(`randomToken(${kind}) is the kind's prefix plus 256 random bits in base64url`, () => {
    const token = randomToken(cryptoRandom, kind);
    assert.ok(token.startsWith(TOKEN_PREFIX[kind]));
    const body = token.slice(TOKEN_PREFIX[kind].length);
    assert.match(body, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(decodeBase64Url(body)?.length, 32);
  });
}

test("prefixes are distinct, so a leaked value tells which kind it is", () => {
  const prefixes = Object.values(TOKEN_PREFIX);
  assert.equal(new Set(prefixes).size, prefixes.length);
});

test("randomToken draws fresh bytes every time", () => {
  const seen = new Set(Array.from({ length: 200 }, () => randomToken(cryptoRandom, "accessToken")));
  assert.equal(seen.size, 200);
});

test("randomId encodes the requested number of bytes", () => {
  assert.equal(decodeBase64Url(randomId(cryptoRandom))?.length, 16);
  assert.equal(decodeBase64Url(randomId(cryptoRandom, 8))?.length, 8);
});
