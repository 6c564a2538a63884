// GET and POST /oauth/authorize: the sign-in and consent pages around the authorization decision (oauth/authorize.ts).
import type { Deps } from "../deps.ts";
import type { RequestContext, Route, RouteFactory } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { invalidRequest } from "../oauth/errors.ts";
import { audit } from "../oauth/audit.ts";
import { canonicalRequest, queryParams, validateAuthorizeRequest, type AuthorizeRequest } from "../oauth/authorize_request.ts";
import { consentRemembered, deniedUrl, formParams, issueCode, requestFields, requestPath } from "../oauth/authorize.ts";
import { readSession, type SignedIn } from "./session.ts";
import { csrfToken, verifyCsrf } from "./csrf.ts";
import { renderConsent } from "./consent.ts";
import { page } from "./page.ts";
import { signInPage, signOutCsrf } from "./sign_in_page.ts";

const CONSENT = "consent";

const approverOf = (signedIn: SignedIn) => ({ userId: signedIn.user.id, sessionHash: signedIn.sessionHash });

/** The consent page; with a notice (403) when a submitted decision was not taken and the user is asked again. */
async function consentPage(deps: Deps, request: AuthorizeRequest, signedIn: SignedIn, notice?: string): Promise<Response> {
  const body = renderConsent({
    appName: request.client.name,
    redirectHost: new URL(request.redirectUri).host || request.redirectUri,
    username: signedIn.user.name ?? signedIn.user.username,
    account: signedIn.user.username,
    scope: request.scope,
    fields: requestFields(request),
    csrf: await csrfToken(deps, signedIn.cookieValue, { purpose: CONSENT, binding: canonicalRequest(request) }),
    signOutCsrf: await signOutCsrf(deps, signedIn.cookieValue),
    notice,
  });
  return page(body, { status: notice ? 403 : 200, formTargets: [request.redirectUri] });
}

/**
 * The sign-in page whose `next` is this authorization request, rebuilt from the validated parameters rather than
 * copied from the URL: the URL parser leaves a backslash in a query raw (`state=a\b`), and sign-in refuses any in
 * `next` (in a path it can name another host), so a copied URL would not lead back to the application.
 */
function signInFirst(deps: Deps, request: Request, authz: AuthorizeRequest, status?: number): Promise<Response> {
  const next = requestPath(authz);
  return signInPage(deps, request, { next, appName: authz.client.name, formTargets: [authz.redirectUri], status });
}

/** The sign-in or consent page for a request whose remembered consent or session lapsed while it ran. */
async function authorizeAgain(deps: Deps, request: Request, authz: AuthorizeRequest): Promise<Response> {
  const signedIn = await readSession(deps, request);
  return signedIn ? consentPage(deps, authz, signedIn) : signInFirst(deps, request, authz);
}

async function authorizeEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const outcome = await validateAuthorizeRequest(deps, queryParams(ctx.url.searchParams));
  if (!outcome.ok) return redirect(outcome.redirect.href, 302);
  const authz = outcome.request;
  const signedIn = await readSession(deps, request);
  if (!signedIn) return signInFirst(deps, request, authz);
  // HEAD shares the GET route but must stay safe (RFC 9110 §9.2.1): it never mints a code.
  if (request.method === "GET" && await consentRemembered(deps, authz, signedIn.user.id)) {
    const location = await issueCode(deps, authz, { approver: approverOf(signedIn), consent: "remembered" });
    // The session ended or the consent was withdrawn while this request was in flight: answer as now.
    if (!location) return authorizeAgain(deps, request, authz);
    await audit(deps, "consent_granted", {
      clientId: authz.client.clientId,
      userId: signedIn.user.id,
      ip: ctx.clientIp,
      detail: { scope: authz.scope, remembered: true },
    });
    return redirect(location.href, 302);
  }
  return consentPage(deps, authz, signedIn);
}

async function decisionEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const form = await readParams(request, deps.config.maxBodyBytes);
  const outcome = await validateAuthorizeRequest(deps, formParams(form));
  if (!outcome.ok) return redirect(outcome.redirect.href, 303);
  const authz = outcome.request;
  // The session ended while the page was open: sign in, then decide again on a fresh consent page.
  const signedIn = await readSession(deps, request);
  if (!signedIn) return signInFirst(deps, request, authz, 403);
  // The token binds session and the exact request: a forged or altered form, or one another session was shown
  // (signed out and in again in another tab), decides nothing. This session is asked again, with a token of its
  // own; asking is what GET /oauth/authorize would do for anyone holding the link.
  if (!(await verifyCsrf(deps, signedIn.cookieValue, { token: form.csrf, purpose: CONSENT, binding: canonicalRequest(authz) }))) {
    return consentPage(deps, authz, signedIn, "This form had expired or was changed, so nothing was decided. Please choose again.");
  }
  const facts = { clientId: authz.client.clientId, userId: signedIn.user.id, ip: ctx.clientIp, detail: { scope: authz.scope } };
  if (form.decision === "approve") {
    const location = await issueCode(deps, authz, { approver: approverOf(signedIn), consent: "given" });
    // The session ended (a password change, a disable) while the decision was in flight: sign in again first.
    if (!location) return signInFirst(deps, request, authz, 403);
    await audit(deps, "consent_granted", facts);
    return redirect(location.href, 303);
  }
  if (form.decision === "deny") {
    await audit(deps, "consent_denied", facts);
    return redirect(deniedUrl(deps, authz).href, 303);
  }
  throw invalidRequest("Choose Approve or Deny");
}

/** Routes of the authorization endpoint: the request (GET) and the consent decision (POST). */
export const authorizeRoutes: RouteFactory = (deps): Route[] => [
  { method: "GET", path: "/oauth/authorize", surface: "html", handler: (req, ctx) => authorizeEndpoint(deps, req, ctx) },
  { method: "POST", path: "/oauth/authorize", surface: "html", handler: (req, ctx) => decisionEndpoint(deps, req, ctx) },
];
