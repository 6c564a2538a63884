// CSRF tokens: HMAC-SHA256 keyed by a cookie secret over a purpose and, for consent, the exact request approved.
import { constantTimeEqual } from "../crypto/compare.ts";
import { hmacSha256Base64Url } from "../crypto/hmac.ts";

/**
 * The token for a form. Keyed by the (pre-)session cookie value the browser holds, so another site cannot compute
 * it; bound to `purpose` and `binding` so a token for one form or one authorization request is useless for another.
 */
export function csrfToken(cookieValue: string, purpose: string, binding = ""): Promise<string> {
  return hmacSha256Base64Url(cookieValue, `${purpose}\n${binding}`);
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
