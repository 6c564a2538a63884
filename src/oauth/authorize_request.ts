// Validation of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3): trust the client and redirect URI first.
import type { Deps } from "../deps.ts";
import { invalidRequest, invalidScope, OAuthError } from "./errors.ts";
import type { Client } from "../store/contract.ts";
import { isRegisteredRedirectUri } from "../store/rows.ts";

/** A validated authorization request, in the canonical form the consent form carries and its CSRF token binds. */
export interface AuthorizeRequest {
  client: Client;
  redirectUri: string;
  scope: string;
  state: string | undefined;
  codeChallenge: string | undefined;
  /** The DPoP key thumbprint the code is bound to (RFC 9449 §10); undefined when the request named none. */
  dpopJkt: string | undefined;
}

/** Either a request to act on, or an error to send back to the (now trusted) redirect URI. */
export type AuthorizeOutcome =
  | { ok: true; request: AuthorizeRequest }
  | { ok: false; redirect: URL };

/** Parameters as read from the query or the consent form: a name may be absent, present once, or repeated. */
export interface RawParams {
  get(name: string): string | undefined;
  /** True when the name occurs more than once (RFC 6749 §3.1 forbids it). */
  repeated(name: string): boolean;
}

// RFC 7636 §4.2: S256 of a verifier, base64url without padding, is always 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const JKT = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE_LENGTH = 1_024;
// RFC 6749 Appendix A.5: state = 1*VSCHAR, VSCHAR = %x20-7E.
const VSCHARS = /^[\x20-\x7e]*$/;

/** RawParams over a URL query string. */
export function queryParams(search: URLSearchParams): RawParams {
  return {
    get: (name) => search.get(name) || undefined,
    repeated: (name) => search.getAll(name).length > 1,
  };
}

/** Parameters the authorization response adds to a redirect URI (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207). */
export const RESPONSE_PARAMETERS: ReadonlySet<string> = new Set(["code", "state", "iss", "error", "error_description", "error_uri"]);

/**
 * The authorization response URL: the redirect URI with the parameters and `iss` (RFC 9207) appended to its query.
 * The registered query stays byte for byte as registered (RFC 6749 §3.1.2: it MUST be retained); re-serialising
 * it through searchParams would rewrite `flag` as `flag=` and `/` as `%2F`. Registration refuses redirect URIs
 * whose query already uses a response parameter's name (validateRedirectUri); an older registration that does
 * has those parameters replaced instead, so none is ever sent twice.
 */
export function responseUrl(deps: Pick<Deps, "config">, redirectUri: string, params: Record<string, string | undefined>): URL {
  const added = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) added.append(name, value);
  added.append("iss", deps.config.baseUrl);
  const url = new URL(redirectUri);
  // A URI registered before registration refused such queries: drop every response parameter it carries (a stale
  // code beside an error would be redeemed), then add ours; its other parameters are re-serialised, as before.
  if ([...url.searchParams.keys()].some((name) => RESPONSE_PARAMETERS.has(name))) {
    for (const name of RESPONSE_PARAMETERS) url.searchParams.delete(name);
    for (const [name, value] of added) url.searchParams.append(name, value);
    return url;
  }
  url.search = url.search ? `${url.search.slice(1)}&${added}` : added.toString();
  return url;
}

/**
 * Finds the client and checks the redirect URI. Until both are trusted nothing may redirect (RFC 6749 §4.1.2.1,
 * RFC 9700 §4.1.3: exact string match against a registered URI for every client, loopback included, or the endpoint
 * becomes an open redirector). The code remembers the URI, and the token request must repeat it exactly (§4.1.3).
 * @throws OAuthError invalid_request (400, rendered as the HTML error page)
 */
export async function trustedClient(deps: Deps, params: RawParams): Promise<{ client: Client; redirectUri: string }> {
  const clientId = params.get("client_id");
  if (!clientId || params.repeated("client_id")) throw invalidRequest("The request has no valid client_id");
  const client = await deps.store.clients.findByClientId(clientId);
  if (!client || client.disabled) throw invalidRequest("This application is unknown or has been disabled");
  if (client.grantType !== "authorization_code" || client.redirectUri === null) {
    throw invalidRequest("This application is not allowed to ask users for access");
  }
  const redirectUri = params.get("redirect_uri");
  // RFC 6749 §3.1.2.3 would let a client with one registered URI leave it out; the service spec (§4.1) lists
  // every parameter as required, so the page says what to send.
  if (params.repeated("redirect_uri")) throw invalidRequest("Parameter redirect_uri is repeated");
  if (!redirectUri) {
    throw invalidRequest("Parameter redirect_uri is required: send the callback URI registered for this application");
  }
  if (!isRegisteredRedirectUri(client, redirectUri)) {
    throw invalidRequest("The redirect_uri does not match the one registered for this application");
  }
  return { client, redirectUri };
}

/**
 * Why `state` cannot be carried through the consent form and back unchanged, or undefined when it can. Beyond
 * VSCHAR the round trip fails: a browser rewrites CR, LF and NUL in the form's hidden input, so the consent token
 * bound to the exact request never matches and the user could never approve; and such a state is not valid anyway.
 */
function stateProblem(state: string): string | undefined {
  if (state.length > MAX_STATE_LENGTH) return "Parameter state is too long";
  if (!VSCHARS.test(state)) return "Parameter state may contain only printable ASCII characters and spaces";
  return undefined;
}

/** Same scopes regardless of order or repeated spaces (RFC 6749 §3.3: a space-delimited set). */
function sameScopes(requested: string, registered: string): boolean {
  const a = new Set(requested.split(" ").filter(Boolean));
  const b = new Set(registered.split(" ").filter(Boolean));
  return a.size === b.size && [...a].every((s) => b.has(s));
}

/** The first problem of a request whose client is trusted, or undefined. */
function problem(deps: Deps, params: RawParams, client: Client): OAuthError | undefined {
  for (const name of ["response_type", "response_mode", "scope", "state", "code_challenge", "code_challenge_method", "dpop_jkt"]) {
    if (params.repeated(name)) return invalidRequest(`Parameter ${name} is repeated`);
  }
  const responseType = params.get("response_type");
  if (!responseType) return invalidRequest("Parameter response_type is required");
  if (responseType !== "code") return new OAuthError("unsupported_response_type", "Only response_type=code is supported");
  // The metadata lists query as the only response mode. A client that asked for fragment or form_post would get
  // its code where it does not look for it (and in URLs it meant to keep it out of): refused, not ignored.
  const responseMode = params.get("response_mode");
  if (responseMode !== undefined && responseMode !== "query") {
    return invalidRequest("Only response_mode=query is supported");
  }
  const scope = params.get("scope");
  if (!scope) return invalidScope("Parameter scope is required: send the scope registered for this application");
  if (!sameScopes(scope, client.scope)) return invalidScope("The scope does not match the registered scope");
  const badState = stateProblem(params.get("state") ?? "");
  if (badState) return invalidRequest(badState);
  // RFC 9449 §10: a base64url SHA-256 JWK thumbprint (RFC 7638), 43 characters.
  const jkt = params.get("dpop_jkt");
  if (jkt !== undefined && !JKT.test(jkt)) return invalidRequest("dpop_jkt is not a base64url SHA-256 JWK thumbprint");
  const challenge = params.get("code_challenge");
  const method = params.get("code_challenge_method");
  if (challenge === undefined) {
    if (method !== undefined) return invalidRequest("code_challenge_method was sent without code_challenge");
    // Optional for every client, loopback included: each one authenticates with its secret at the token endpoint.
    if (deps.config.requirePkce) return invalidRequest("PKCE is required: send code_challenge with method S256");
    return undefined;
  }
  // RFC 9700 §2.1.1: plain offers no protection when the request leaks, so only S256 (the RFC 7636 default is plain).
  if (method !== "S256") return invalidRequest("code_challenge_method must be S256");
  if (!S256_CHALLENGE.test(challenge)) return invalidRequest("code_challenge is not a valid S256 challenge");
  return undefined;
}

/** The error response to a trusted redirect URI (RFC 6749 §4.1.2.1): the error's code and description, and state. */
export function errorRedirectUrl(deps: Pick<Deps, "config">, redirectUri: string, error: OAuthError, state: string | undefined): URL {
  return responseUrl(deps, redirectUri, { error: error.code, error_description: error.description, state });
}

/**
 * Validates an authorization request. Problems with client or redirect URI throw (HTML error page); every other
 * problem becomes an error redirect carrying state and iss (RFC 6749 §4.1.2.1, RFC 9207 §2).
 * @throws OAuthError invalid_request (400) for an untrusted client or redirect URI
 */
export async function validateAuthorizeRequest(deps: Deps, params: RawParams): Promise<AuthorizeOutcome> {
  const { client, redirectUri } = await trustedClient(deps, params);
  // A refused state is not echoed either: the error redirect would carry the whole oversized value, or reflect
  // control characters that no client following RFC 6749 Appendix A.5 sends.
  const given = params.repeated("state") ? undefined : params.get("state");
  const state = given !== undefined && stateProblem(given) === undefined ? given : undefined;
  const found = problem(deps, params, client);
  if (found) return { ok: false, redirect: errorRedirectUrl(deps, redirectUri, found, state) };
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      scope: client.scope,
      state,
      codeChallenge: params.get("code_challenge"),
      dpopJkt: params.get("dpop_jkt"),
    },
  };
}

/** The exact request a consent form approves, as the string its CSRF token is bound to. */
export function canonicalRequest(request: AuthorizeRequest): string {
  const fields = [request.client.clientId, request.redirectUri, request.scope, request.state ?? "", request.codeChallenge ?? ""];
  // Appended only when present, so a form issued for a request without it stays valid across an upgrade.
  return JSON.stringify(request.dpopJkt === undefined ? fields : [...fields, request.dpopJkt]);
}
