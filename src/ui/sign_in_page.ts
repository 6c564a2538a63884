// The sign-in page as a response, and the CSRF purposes of the sign-in and sign-out forms: shared by the sign-in
// routes, the authorization endpoint (which asks a signed-out browser to sign in first) and every page with a
// sign-out form.
import type { Deps } from "../deps.ts";
import { csrfToken } from "./csrf.ts";
import { page } from "./page.ts";
import { newPreSession, preSession } from "./session.ts";
import { renderSignIn, type SignInView } from "./sign_in.ts";

/** CSRF purpose of the sign-in form (keyed by the pre-session cookie). */
export const SIGN_IN = "signin";
/** CSRF purpose of the sign-out form (keyed by the session cookie). */
export const SIGN_OUT = "signout";

export interface SignInPageOptions extends Omit<SignInView, "csrf"> {
  status?: number;
  formTargets?: string[];
  headers?: Record<string, string>;
  /** Plant a new pre-session cookie even if the browser sent one (the form it had was not accepted). */
  renew?: boolean;
}

/** The sign-in page response, planting the pre-session cookie its CSRF token is keyed by when needed. */
export async function signInPage(deps: Deps, request: Request, view: SignInPageOptions): Promise<Response> {
  const { status, formTargets, headers, renew, ...content } = view;
  const pre = renew ? newPreSession(deps) : preSession(deps, request);
  const csrf = await csrfToken(deps, pre.value, { purpose: SIGN_IN });
  return page(renderSignIn({ ...content, csrf }), {
    status,
    headers,
    cookies: pre.setCookie ? [pre.setCookie] : [],
    formTargets,
  });
}

/** The CSRF token of the sign-out form for a signed-in browser. */
export function signOutCsrf(deps: Pick<Deps, "hmac">, sessionCookie: string): Promise<string> {
  return csrfToken(deps, sessionCookie, { purpose: SIGN_OUT });
}
