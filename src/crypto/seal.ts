// Sealing: authenticated encryption (AES-256-GCM) of a short text under a key derived (HKDF-SHA256) from a secret.
import type { Random } from "../deps.ts";
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";

const encoder = new TextEncoder();
/** 96-bit nonces, the size GCM is specified for (NIST SP 800-38D §8.2). */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The AES key for `secret` and `purpose`. No salt: the secret is already a uniformly random 256-bit value, which
 * HKDF's extract step needs no help with (RFC 5869 §3.1); `purpose` keeps keys for different uses apart.
 */
async function sealingKey(secret: string, purpose: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(purpose) },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/**
 * Encrypts `text` under a key derived from the high-entropy `secret` (never a password) for `purpose`.
 * @returns base64url of nonce ‖ ciphertext ‖ tag
 */
export async function sealText(
  secret: string,
  text: string,
  options: { purpose: string; random: Random },
): Promise<string> {
  const iv = options.random(IV_BYTES);
  const key = await sealingKey(secret, options.purpose);
  const params = { name: "AES-GCM", iv: iv as BufferSource };
  const sealed = new Uint8Array(await crypto.subtle.encrypt(params, key, encoder.encode(text)));
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return encodeBase64Url(out);
}

/** The text `sealText` sealed with this secret and purpose; undefined for another secret, purpose, or any alteration. */
export async function openSealed(
  secret: string,
  sealed: string,
  options: { purpose: string },
): Promise<string | undefined> {
  const bytes = decodeBase64Url(sealed);
  if (!bytes || bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  const key = await sealingKey(secret, options.purpose);
  const params = { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) as BufferSource };
  try {
    const plain = await crypto.subtle.decrypt(params, key, bytes.subarray(IV_BYTES) as BufferSource);
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch (error) {
    // A failed tag check is GCM's defined answer to a wrong key or altered bytes; anything else is a real fault.
    if (error instanceof DOMException && error.name === "OperationError") return undefined;
    throw error;
  }
}
