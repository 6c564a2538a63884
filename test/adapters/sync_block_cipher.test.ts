// syncBlockCipher must be the same permutation as the portable Web Crypto one, both ways, block for block.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { syncBlockCipher } from "../../src/adapters/sync_block_cipher.ts";
import { webCryptoBlockCipher } from "../../src/crypto/block_cipher.ts";

test("syncBlockCipher gives the FIPS-197 C.3 AES-256 vector", async () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  const plain = Uint8Array.from({ length: 16 }, (_, i) => i * 0x11);
  const aes = await syncBlockCipher(key);
  const sealed = await aes.encrypt(plain);
  assert.equal(Buffer.from(sealed).toString("hex"), "8ea2b7ca516745bfeafc49904b496089");
  assert.deepEqual(await aes.decrypt(sealed), plain);
});

test("syncBlockCipher agrees with webCryptoBlockCipher on a page of random blocks under a random key", async () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const blocks = crypto.getRandomValues(new Uint8Array(16 * 100));
  const [fast, portable] = [await syncBlockCipher(key), await webCryptoBlockCipher(key)];
  const sealed = await fast.encrypt(blocks);
  assert.deepEqual(sealed, await portable.encrypt(blocks));
  assert.deepEqual(await portable.decrypt(sealed), blocks);
  assert.deepEqual(await fast.decrypt(sealed), blocks);
  // The reused cipher objects carry nothing from one call to the next.
  assert.deepEqual(await fast.encrypt(blocks.subarray(16, 32)), sealed.subarray(16, 32));
});
