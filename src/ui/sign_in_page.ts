// The sign-in page as a response, and the CSRF purposes of the sign-in and sign-out forms: shared by the sign-in
// routes, the authorization endpoint (which asks a signed-out browser to sign in first) and every page with a
// sign-out form.
import type { Deps } from "../deps.ts";
import { csrfToken } from "./csrf.ts";
import { page } from "./page.ts";
import { preSession } from "./session.ts";
import { renderSignIn } from "./sign_in.ts";

/** CSRF purpose of the sign-in form (keyed by the pre-session cookie). */
export const SIGN_IN = "signin";
/** CSRF purpose of the sign-out form (keyed by the session cookie). */
export const SIGN_OUT = "signout";

/** The sign-in page response, planting the pre-session cookie its CSRF token is keyed by when needed. */
export async function signInPage(
  deps: Deps,
  request: Request,
  view: { next: string; appName?: string; username?: string; error?: string; status?: number; formTargets?: string[] },
): Promise<Response> {
  const pre = preSession(deps, request);
  const csrf = await csrfToken(pre.value, SIGN_IN);
  return page(renderSignIn({ ...view, csrf }), {
    status: view.status,
    cookies: pre.setCookie ? [pre.setCookie] : [],
    formTargets: view.formTargets,
  });
}

/** The CSRF token of the sign-out form for a signed-in browser. */
export function signOutCsrf(sessionCookie: string): Promise<string> {
  return csrfToken(sessionCookie, SIGN_OUT);
}
