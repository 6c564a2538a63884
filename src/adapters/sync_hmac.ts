// HMAC-SHA256 through node:crypto's synchronous createHmac, for both runtime adapters (Deno implements node:crypto
// too); same output as crypto/hmac.ts hmacSha256Base64Url, the portable path an embedder gets by default.
import { createHmac } from "node:crypto";
import type { Hmac } from "../deps.ts";

/**
 * Computed on the calling thread instead of crypto.subtle.sign, which on Node queues behind every PBKDF2 derivation
 * on libuv's four-thread pool: every HTML page signs a CSRF token, and a burst of sign-ins held those pages for seconds.
 */
export const syncHmacSha256Base64Url: Hmac = async (key, message) =>
  createHmac("sha256", key).update(message).digest("base64url");
