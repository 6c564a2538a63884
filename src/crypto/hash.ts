// Hashing with Web Crypto: SHA-256 for high-entropy credentials, PBKDF2 for human passwords.
import type { Bcrypt, Digest, Pbkdf2, Random } from "../deps.ts";
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";
import { constantTimeEqual } from "./compare.ts";
import { verifyBcrypt } from "./bcrypt.ts";

const encoder = new TextEncoder();

/** Lowercase hex SHA-256 of a UTF-8 string via crypto.subtle. */
export async function sha256Hex(value: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
  let hex = "";
  for (let i = 0; i < digest.length; i++) hex += digest[i]!.toString(16).padStart(2, "0");
  return hex;
}

/**
 * base64url SHA-256 of an ASCII string: the PKCE S256 transform (RFC 7636 §4.2), through `digest` (the app's
 * injected one, so it takes the same path as every other digest).
 */
export async function sha256Base64Url(value: string, digest: Digest = sha256Hex): Promise<string> {
  const hex = await digest(value);
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return encodeBase64Url(bytes);
}

/** PBKDF2-HMAC-SHA256 through crypto.subtle: the default Pbkdf2. */
export const pbkdf2Sha256: Pbkdf2 = async (password, salt, iterations) => {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    key,
    256,
  );
  return new Uint8Array(bits);
};

/**
 * Hashes a password as `pbkdf2-sha256$<iterations>$<salt>$<hash>`; the parameters travel with the hash
 * so the iteration count can be raised later without invalidating stored passwords.
 */
export async function hashPassword(
  password: string,
  options: { iterations: number; random: Random; pbkdf2?: Pbkdf2 },
): Promise<string> {
  const salt = options.random(16);
  const hash = await (options.pbkdf2 ?? pbkdf2Sha256)(password, salt, options.iterations);
  return `pbkdf2-sha256$${options.iterations}$${encodeBase64Url(salt)}$${encodeBase64Url(hash)}`;
}

/**
 * Checks a password against a stored PBKDF2 hash in constant time, or against a bcrypt digest imported from another
 * system (Doorkeeper's host application); false for any malformed hash. A bcrypt digest reports 0 iterations
 * (passwordIterations), so sign-in replaces it with PBKDF2 at the first success.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  options: { pbkdf2?: Pbkdf2; bcrypt?: Bcrypt } = {},
): Promise<boolean> {
  if (stored.startsWith("$2")) return await (options.bcrypt ?? verifyBcrypt)(password, stored);
  const [scheme, iterationsText, saltText, hashText] = stored.split("$");
  const iterations = Number(iterationsText);
  const salt = decodeBase64Url(saltText ?? "");
  const expected = decodeBase64Url(hashText ?? "");
  if (scheme !== "pbkdf2-sha256" || !Number.isSafeInteger(iterations) || iterations < 1 || !salt || !expected) {
    return false;
  }
  return constantTimeEqual(await (options.pbkdf2 ?? pbkdf2Sha256)(password, salt, iterations), expected);
}

/** Iteration count stored in a PBKDF2 hash (0 for any other hash), so sign-in can rehash weaker ones. */
export function passwordIterations(stored: string): number {
  if (!stored.startsWith("pbkdf2-sha256$")) return 0;
  return Number(stored.split("$")[1]) || 0;
}
