// GET /oauth/authorize and the consent decision: the browser-facing start of the authorization code flow.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext, Route, RouteFactory } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import { invalidRequest, OAuthError } from "./errors.ts";
import { audit } from "./audit.ts";
import { isLoopbackRedirectUri } from "./redirect_uri.ts";
import {
  canonicalRequest,
  errorRedirectUrl,
  queryParams,
  responseUrl,
  validateAuthorizeRequest,
  type AuthorizeRequest,
  type RawParams,
} from "./authorize_request.ts";
import { readSession, type SignedIn } from "../ui/session.ts";
import { csrfToken, verifyCsrf } from "../ui/csrf.ts";
import { renderConsent } from "../ui/consent.ts";
import { page } from "../ui/page.ts";
import { signInPage, signOutCsrf } from "../ui/sign_in_page.ts";

const CONSENT = "consent";

/**
 * Issues a single-use code for the approved request and returns the success redirect (RFC 6749 §4.1.2). The store
 * re-checks the session (and a remembered consent) when it writes the code, and stores a consent given just now
 * with it; undefined when they no longer held (the password changed, access was withdrawn meanwhile).
 */
async function issueCode(
  deps: Deps,
  request: AuthorizeRequest,
  signedIn: SignedIn,
  consent: "remembered" | "given",
): Promise<URL | undefined> {
  const code = randomToken(deps.random, "authorizationCode");
  const issuedAt = nowSeconds(deps.clock);
  const stored = await deps.store.codes.issue({
    codeHash: await deps.digest(code),
    familyId: randomId(deps.random),
    clientId: request.client.id,
    userId: signedIn.user.id,
    redirectUri: request.redirectUri,
    scope: request.scope,
    codeChallenge: request.codeChallenge ?? null,
    issuedAt,
    expiresAt: issuedAt + deps.config.codeTtlSeconds,
  }, { sessionHash: signedIn.sessionHash, clientId: request.client.clientId, now: issuedAt, consent });
  return stored ? responseUrl(deps, request.redirectUri, { code, state: request.state }) : undefined;
}

/**
 * True when the user already granted this client exactly this scope, so the consent page can be skipped. Never
 * for a loopback redirect URI: any program on the device may listen there and ask in the client's name, so an
 * earlier approval proves nothing about this request (RFC 8252 §8.6, RFC 6749 §10.2).
 */
async function remembered(deps: Deps, request: AuthorizeRequest, userId: number): Promise<boolean> {
  if (isLoopbackRedirectUri(request.client.redirectUri)) return false;
  const consent = await deps.store.consents.find(userId, request.client.id);
  return consent !== undefined && consent.scope === request.scope;
}

/** The request as authorization parameters: the consent form's hidden fields and the link back to this request. */
function requestFields(request: AuthorizeRequest): Record<string, string | undefined> {
  return {
    client_id: request.client.clientId,
    response_type: "code",
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallenge === undefined ? undefined : "S256",
  };
}

/** The GET URL (path and query) of the same authorization request. */
function requestPath(request: AuthorizeRequest): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(requestFields(request))) if (value !== undefined) query.set(name, value);
  return `/oauth/authorize?${query}`;
}

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
 * `next` (in a path it can name another host), so the user landed on /account instead of back at the application.
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
  if (request.method === "GET" && await remembered(deps, authz, signedIn.user.id)) {
    const location = await issueCode(deps, authz, signedIn, "remembered");
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

function formParams(form: Record<string, string>): RawParams {
  // readParams already refuses repeated form fields.
  return { get: (name) => form[name], repeated: () => false };
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
    const location = await issueCode(deps, authz, signedIn, "given");
    // The session ended (a password change, a disable) while the decision was in flight: sign in again first.
    if (!location) return signInFirst(deps, request, authz, 403);
    await audit(deps, "consent_granted", facts);
    return redirect(location.href, 303);
  }
  if (form.decision === "deny") {
    await audit(deps, "consent_denied", facts);
    const denied = new OAuthError("access_denied", "The user denied the request");
    const location = errorRedirectUrl(deps, authz.redirectUri, denied, authz.state);
    return redirect(location.href, 303);
  }
  throw invalidRequest("Choose Approve or Deny");
}

/** Routes of the authorization endpoint: the request (GET) and the consent decision (POST). */
export const authorizeRoutes: RouteFactory = (deps): Route[] => [
  { method: "GET", path: "/oauth/authorize", surface: "html", handler: (req, ctx) => authorizeEndpoint(deps, req, ctx) },
  { method: "POST", path: "/oauth/authorize", surface: "html", handler: (req, ctx) => decisionEndpoint(deps, req, ctx) },
];
