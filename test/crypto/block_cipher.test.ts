import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { deriveBlockKey, webCryptoBlockCipher } from "../../src/crypto/block_cipher.ts";

const hex = (text: string) => Uint8Array.from(text.match(/../g)!, (byte) => parseInt(byte, 16));
const toHex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

// FIPS-197 Appendix C.3: AES-256 on one block.
const KEY = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
const PLAIN = "00112233445566778899aabbccddeeff";
const CIPHER = "8ea2b7ca516745bfeafc49904b496089";

test("webCryptoBlockCipher is AES-256 on a block: the FIPS-197 C.3 vector both ways", async () => {
  const aes = await webCryptoBlockCipher(KEY);
  assert.equal(toHex(await aes.encrypt(hex(PLAIN))), CIPHER);
  assert.equal(toHex(await aes.decrypt(hex(CIPHER))), PLAIN);
});

test("webCryptoBlockCipher takes several blocks and treats each on its own (ECB)", async () => {
  const aes = await webCryptoBlockCipher(KEY);
  const three = hex(PLAIN + "00".repeat(16) + PLAIN);
  const sealed = toHex(await aes.encrypt(three));
  assert.equal(sealed.slice(0, 32), CIPHER);
  assert.equal(sealed.slice(64), CIPHER, "the same block gives the same output wherever it stands");
  assert.equal(toHex(await aes.decrypt(hex(sealed))), toHex(three));
});

test("webCryptoBlockCipher refuses a partial block", async () => {
  const aes = await webCryptoBlockCipher(KEY);
  await assert.rejects(aes.encrypt(new Uint8Array(17)), RangeError);
});

test("deriveBlockKey gives 256 bits that depend on both the secret and the purpose", async () => {
  const key = await deriveBlockKey("secret", "ids");
  assert.equal(key.length, 32);
  assert.deepEqual(await deriveBlockKey("secret", "ids"), key);
  assert.notDeepEqual(await deriveBlockKey("secret", "cursors"), key);
  assert.notDeepEqual(await deriveBlockKey("secret2", "ids"), key);
});
