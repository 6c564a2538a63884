// CSRF tokens: HMAC-SHA256 keyed by a cookie secret over a purpose and, for consent, the exact request approved.
import type { Deps } from "../deps.ts";
import { constantTimeEqual } from "../crypto/compare.ts";

/** What a token is for: the form's purpose and, where one applies, the exact request it approves. */
export interface CsrfBinding {
  purpose: string;
  binding?: string;
}

/**
 * The token for a form, through the app's injected HMAC (every page signs one, so it must not wait behind password
 * work). Keyed by the (pre-)session cookie value the browser holds, so another site cannot compute it; bound to
 * `purpose` and `binding` so a token for one form or one authorization request is useless for another.
 */
export function csrfToken(deps: Pick<Deps, "hmac">, cookieValue: string, options: CsrfBinding): Promise<string> {
  return deps.hmac(cookieValue, `${options.purpose}\n${options.binding ?? ""}`);
}

/** True when `options.token` is the token for this cookie, purpose and binding; compared in constant time. */
export async function verifyCsrf(
  deps: Pick<Deps, "hmac">,
  cookieValue: string | undefined,
  options: CsrfBinding & { token: string | undefined },
): Promise<boolean> {
  if (!cookieValue || !options.token) return false;
  return constantTimeEqual(await csrfToken(deps, cookieValue, options), options.token);
}
