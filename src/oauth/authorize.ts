// The authorization decision (RFC 6749 §4.1.1–§4.1.2): issuing a code for an approved request, the consent that may
// be skipped, the denial; ui/authorize_routes.ts shows the pages around it.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import { OAuthError } from "./errors.ts";
import { isLoopbackRedirectUri } from "./redirect_uri.ts";
import { errorRedirectUrl, responseUrl, type AuthorizeRequest, type RawParams } from "./authorize_request.ts";

/** The signed-in user who decides, with the session digest the code's write re-checks. */
export interface Approver {
  userId: number;
  sessionHash: string;
}

/**
 * Issues a single-use code for the approved request and returns the success redirect (RFC 6749 §4.1.2). The store
 * re-checks the session (and a remembered consent) when it writes the code, and stores a consent given just now
 * with it; undefined when they no longer held (the password changed, access was withdrawn meanwhile).
 */
export async function issueCode(
  deps: Deps,
  request: AuthorizeRequest,
  options: { approver: Approver; consent: "remembered" | "given" },
): Promise<URL | undefined> {
  const { approver, consent } = options;
  const code = randomToken(deps.random, "authorizationCode");
  const issuedAt = nowSeconds(deps.clock);
  const stored = await deps.store.codes.issue({
    codeHash: await deps.digest(code),
    familyId: randomId(deps.random),
    clientId: request.client.id,
    userId: approver.userId,
    redirectUri: request.redirectUri,
    scope: request.scope,
    codeChallenge: request.codeChallenge ?? null,
    dpopJkt: request.dpopJkt ?? null,
    issuedAt,
    expiresAt: issuedAt + deps.config.codeTtlSeconds,
  }, { sessionHash: approver.sessionHash, clientId: request.client.clientId, now: issuedAt, consent });
  return stored ? responseUrl(deps, request.redirectUri, { code, state: request.state }) : undefined;
}

/**
 * True when the user already granted this client exactly this scope, so the consent page can be skipped. Never
 * for a loopback redirect URI: any program on the device may listen there and ask in the client's name, so an
 * earlier approval proves nothing about this request (RFC 8252 §8.6, RFC 6749 §10.2).
 */
export async function consentRemembered(deps: Deps, request: AuthorizeRequest, userId: number): Promise<boolean> {
  if (isLoopbackRedirectUri(request.client.redirectUri)) return false;
  const consent = await deps.store.consents.find(userId, request.client.id);
  return consent !== undefined && consent.scope === request.scope;
}

/** The redirect that tells the client the user denied the request (RFC 6749 §4.1.2.1 access_denied). */
export function deniedUrl(deps: Deps, request: AuthorizeRequest): URL {
  const denied = new OAuthError("access_denied", "The user denied the request");
  return errorRedirectUrl(deps, request.redirectUri, denied, request.state);
}

/** The request as authorization parameters: the consent form's hidden fields and the link back to this request. */
export function requestFields(request: AuthorizeRequest): Record<string, string | undefined> {
  return {
    client_id: request.client.clientId,
    response_type: "code",
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallenge === undefined ? undefined : "S256",
    dpop_jkt: request.dpopJkt,
  };
}

/** The GET URL (path and query) of the same authorization request. */
export function requestPath(request: AuthorizeRequest): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(requestFields(request))) if (value !== undefined) query.set(name, value);
  return `/oauth/authorize?${query}`;
}

/** RawParams over the consent form's fields. */
export function formParams(form: Record<string, string>): RawParams {
  // readParams already refuses repeated form fields.
  return { get: (name) => form[name], repeated: () => false };
}
