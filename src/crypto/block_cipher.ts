// A keyed pseudorandom permutation of single 16-byte blocks (AES-256) over Web Crypto, for deterministic sealing.
import type { BlockCipher } from "../deps.ts";

const encoder = new TextEncoder();
export const BLOCK_BYTES = 16;
/** PKCS#7 padding of a whole block, which AES-CBC decryption insists on finding at the end. */
const FULL_PADDING = new Uint8Array(BLOCK_BYTES).fill(BLOCK_BYTES);
const ZERO_BLOCK = new Uint8Array(BLOCK_BYTES);

/**
 * The 256-bit key for `purpose` from a high-entropy `secret` (HKDF-SHA256, no salt: the secret is already uniformly
 * random, RFC 5869 §3.1); `purpose` keeps keys for different uses apart.
 */
export async function deriveBlockKey(secret: string, purpose: string): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveBits"]);
  const info = encoder.encode(purpose);
  const bits = await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info }, material, 256);
  return new Uint8Array(bits);
}

/**
 * AES-256 on one block at a time with Web Crypto, which has no ECB mode: encryption is the CTR keystream whose
 * counter block is the plaintext (AES_k(x) XOR zeros), and decryption is CBC over the block followed by one that
 * decrypts to full padding.
 */
export async function webCryptoBlockCipher(key: Uint8Array): Promise<BlockCipher> {
  const ctr = await crypto.subtle.importKey("raw", key as BufferSource, "AES-CTR", false, ["encrypt"]);
  const cbc = await crypto.subtle.importKey("raw", key as BufferSource, "AES-CBC", false, ["decrypt"]);
  const encryptOne = async (block: Uint8Array): Promise<Uint8Array> => {
    const params = { name: "AES-CTR", counter: block as BufferSource, length: 128 };
    return new Uint8Array(await crypto.subtle.encrypt(params, ctr, ZERO_BLOCK));
  };
  return {
    encrypt: encryptOne,
    async decrypt(block) {
      // CBC decrypts block 2 to AES_k^-1(c2) XOR c1, which is the padding exactly when c2 = AES_k(c1 XOR padding).
      const masked = new Uint8Array(BLOCK_BYTES);
      for (let i = 0; i < BLOCK_BYTES; i++) masked[i] = block[i]! ^ FULL_PADDING[i]!;
      const twoBlocks = new Uint8Array(2 * BLOCK_BYTES);
      twoBlocks.set(block);
      twoBlocks.set(await encryptOne(masked), BLOCK_BYTES);
      const params = { name: "AES-CBC", iv: ZERO_BLOCK as BufferSource };
      return new Uint8Array(await crypto.subtle.decrypt(params, cbc, twoBlocks));
    },
  };
}
