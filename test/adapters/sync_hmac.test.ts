// syncHmacSha256Base64Url must agree with the portable crypto.subtle HMAC, byte for byte, on every input.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { syncHmacSha256Base64Url } from "../../src/adapters/sync_hmac.ts";
import { hmacSha256Base64Url } from "../../src/crypto/hmac.ts";

const inputs = [
  { name: "an empty message", key: "k", message: "" },
  { name: "a cookie value and a CSRF purpose", key: "fgcs_" + "A1b2-_".repeat(7), message: "signin\n" },
  { name: "a password hash key and multi-byte UTF-8", key: "pbkdf2-sha256$1000$salt$hash", message: "Feld Nördlich 🌾" },
  { name: "a key longer than the SHA-256 block", key: "k".repeat(200), message: "consent\nclient_id=x" },
  { name: "lone surrogates (encoded as U+FFFD by both)", key: "a\uD800b", message: "c\uDC00d" },
];

for (const { name, key, message } of inputs) {
  test(`syncHmacSha256Base64Url matches hmacSha256Base64Url for ${name}`, async () => {
    assert.equal(await syncHmacSha256Base64Url(key, message), await hmacSha256Base64Url(key, message));
  });
}

test("syncHmacSha256Base64Url gives RFC 4231 test case 2", async () => {
  // HMAC-SHA-256 of "what do ya want for nothing?" keyed "Jefe": 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843.
  const expected = Buffer.from("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", "hex").toString("base64url");
  assert.equal(await syncHmacSha256Base64Url("Jefe", "what do ya want for nothing?"), expected);
});
