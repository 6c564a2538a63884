// CSRF tokens: HMAC-SHA256 keyed by a cookie secret over a purpose and, for consent, the exact request approved.
import { encodeBase64Url } from "../crypto/base64url.ts";
import { constantTimeEqual } from "../crypto/compare.ts";

const encoder = new TextEncoder();

/**
 * The token for a form. Keyed by the (pre-)session cookie value the browser holds, so another site cannot compute
 * it; bound to `purpose` and `binding` so a token for one form or one authorization request is useless for another.
 */
export async function csrfToken(cookieValue: string, purpose: string, binding = ""): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(cookieValue), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${purpose}\n${binding}`));
  return encodeBase64Url(new Uint8Array(mac));
}

/** True when `presented` is the token for this cookie, purpose and binding; compared in constant time. */
export async function verifyCsrf(
  cookieValue: string | undefined,
  presented: string | undefined,
  options: { purpose: string; binding?: string },
): Promise<boolean> {
  if (!cookieValue || !presented) return false;
  return constantTimeEqual(await csrfToken(cookieValue, options.purpose, options.binding), presented);
}
