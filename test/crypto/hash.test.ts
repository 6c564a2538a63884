import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { hashPassword, passwordIterations, pbkdf2Sha256, sha256Base64Url, sha256Hex, verifyPassword } from "../../src/crypto/hash.ts";
import { cryptoRandom, type Pbkdf2 } from "../../src/deps.ts";

test("sha256Hex matches the FIPS 180-2 test vector", async () => {
  assert.equal(await sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("sha256Base64Url is the PKCE S256 transform of RFC 7636 appendix B", async () => {
  assert.equal(await sha256Base64Url("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
});

// Known answers computed outside this code (Python's hashlib.pbkdf2_hmac, checked with `openssl kdf PBKDF2`):
// password "correct horse battery staple ü" (UTF-8), salt bytes 0x00..0x0f, 1000 iterations, 32 bytes. A hash test
// that only verifies what the same code just produced cannot notice the derivation changing (SHA-1 for SHA-256, say).
const KNOWN_PASSWORD = "correct horse battery staple \u00fc";
const KNOWN_SALT = Uint8Array.from({ length: 16 }, (_, i) => i);
const KNOWN_SHA256 = "pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$4375YNS9YZWjOkSSca8vGMcgaeQJp2FL1QhyXildVT4";
/** The same password, salt and count derived with HMAC-SHA1, written as if it were SHA-256. */
const KNOWN_SHA1 = "pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$xqbbKFuDM7YD8DlIKqrG0nMrbJYiC2zTT1sU4bQYOAY";

test("verifyPassword accepts an independently computed PBKDF2-HMAC-SHA256 hash", async () => {
  assert.equal(await verifyPassword(KNOWN_PASSWORD, KNOWN_SHA256), true);
  assert.equal(await verifyPassword("correct horse battery staple u", KNOWN_SHA256), false);
});

test("verifyPassword refuses the PBKDF2-HMAC-SHA1 hash of the same password, salt and count", async () => {
  assert.equal(await verifyPassword(KNOWN_PASSWORD, KNOWN_SHA1), false);
});

test("hashPassword writes the known PBKDF2-HMAC-SHA256 hash for a fixed salt", async () => {
  assert.equal(await hashPassword(KNOWN_PASSWORD, { iterations: 1000, random: () => KNOWN_SALT }), KNOWN_SHA256);
});

test("hashPassword stores scheme, iterations, salt and hash, and verifies only the right password", async () => {
  const stored = await hashPassword("correct horse battery", { iterations: 1000, random: cryptoRandom });
  assert.match(stored, /^pbkdf2-sha256\$1000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(passwordIterations(stored), 1000);
  assert.equal(await verifyPassword("correct horse battery", stored), true);
  assert.equal(await verifyPassword("correct horse batterY", stored), false);
});

test("hashPassword and verifyPassword derive with an injected pbkdf2 at the stored count", async () => {
  const counts: number[] = [];
  const pbkdf2: Pbkdf2 = (password, salt, iterations) => {
    counts.push(iterations);
    return pbkdf2Sha256(password, salt, iterations);
  };
  const stored = await hashPassword("correct horse battery", { iterations: 12, random: cryptoRandom, pbkdf2 });
  assert.equal(await verifyPassword("correct horse battery", stored, { pbkdf2 }), true);
  assert.equal(await verifyPassword("wrong", stored), false, "the default derives the same way");
  assert.deepEqual(counts, [12, 12]);
});

test("two hashes of one password differ by their salt", async () => {
  const a = await hashPassword("pw-123456789", { iterations: 10, random: cryptoRandom });
  const b = await hashPassword("pw-123456789", { iterations: 10, random: cryptoRandom });
  assert.notEqual(a, b);
});

const malformed = ["", "plain", "md5$1$abc$def", "pbkdf2-sha256$x$abc$def", "pbkdf2-sha256$0$abc$def", "pbkdf2-sha256$10$!!$def"];
for (const stored of malformed) {
  test(`verifyPassword is false for the malformed hash ${JSON.stringify(stored)}`, async () => {
    assert.equal(await verifyPassword("anything", stored), false);
  });
}
