// HMAC-SHA256 over UTF-8 text with Web Crypto: form tokens and the signed sign-in device cookie.
import { encodeBase64Url } from "./base64url.ts";

const encoder = new TextEncoder();

/** The base64url HMAC-SHA256 of `message` keyed by the UTF-8 bytes of `key`, a high-entropy secret. */
export async function hmacSha256Base64Url(key: string, message: string): Promise<string> {
  const hmacKey = await crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return encodeBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, encoder.encode(message))));
}
