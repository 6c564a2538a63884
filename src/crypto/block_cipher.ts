// A keyed pseudorandom permutation of 16-byte blocks (AES-256, each block on its own) over Web Crypto.
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

/** Applies `each` to every block of `blocks` concurrently and joins the results in order. */
async function perBlock(blocks: Uint8Array, each: (block: Uint8Array) => Promise<Uint8Array>): Promise<Uint8Array> {
  if (blocks.length % BLOCK_BYTES !== 0) throw new RangeError(`${blocks.length} bytes is not a whole number of blocks`);
  const count = blocks.length / BLOCK_BYTES;
  const done = await Promise.all(
    Array.from({ length: count }, (_, i) => each(blocks.subarray(i * BLOCK_BYTES, (i + 1) * BLOCK_BYTES))),
  );
  const out = new Uint8Array(blocks.length);
  done.forEach((block, i) => out.set(block, i * BLOCK_BYTES));
  return out;
}

/**
 * AES-256 block by block with Web Crypto, which has no ECB mode: encryption is the CTR keystream whose counter
 * block is the plaintext (AES_k(x) XOR zeros), decryption is CBC over the block followed by one that decrypts to
 * full padding. One worker-thread round trip per block (two to decrypt); adapters inject a synchronous ECB instead.
 */
export async function webCryptoBlockCipher(key: Uint8Array): Promise<BlockCipher> {
  const ctr = await crypto.subtle.importKey("raw", key as BufferSource, "AES-CTR", false, ["encrypt"]);
  const cbc = await crypto.subtle.importKey("raw", key as BufferSource, "AES-CBC", false, ["decrypt"]);
  const encryptOne = async (block: Uint8Array): Promise<Uint8Array> => {
    const params = { name: "AES-CTR", counter: block as BufferSource, length: 128 };
    return new Uint8Array(await crypto.subtle.encrypt(params, ctr, ZERO_BLOCK));
  };
  const decryptOne = async (block: Uint8Array): Promise<Uint8Array> => {
    // CBC decrypts block 2 to AES_k^-1(c2) XOR c1, which is the padding exactly when c2 = AES_k(c1 XOR padding).
    const masked = new Uint8Array(BLOCK_BYTES);
    for (let i = 0; i < BLOCK_BYTES; i++) masked[i] = block[i]! ^ FULL_PADDING[i]!;
    const twoBlocks = new Uint8Array(2 * BLOCK_BYTES);
    twoBlocks.set(block);
    twoBlocks.set(await encryptOne(masked), BLOCK_BYTES);
    const params = { name: "AES-CBC", iv: ZERO_BLOCK as BufferSource };
    return new Uint8Array(await crypto.subtle.decrypt(params, cbc, twoBlocks));
  };
  return {
    encrypt: (blocks) => perBlock(blocks, encryptOne),
    decrypt: (blocks) => perBlock(blocks, decryptOne),
  };
}
