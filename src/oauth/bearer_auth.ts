// Access-token authentication for protected resources: Bearer (RFC 6750), or DPoP with a proof (RFC 9449 §7).
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { bearerChallenge, readBearer } from "../http/bearer.ts";
import { badRequest } from "../http/errors.ts";
import { insufficientScope, invalidDpopProof, invalidToken, isOAuthError, OAuthError } from "./errors.ts";
import { DPOP_ALGORITHMS } from "./dpop.ts";
import { spendDpopProof } from "./dpop_check.ts";
import type { OrganizationIds, TokenDetails } from "../store/contract.ts";
import { tokenKey } from "./token_keys.ts";

/** Who is calling: the live access token with its client and acting user. */
export interface AccessContext {
  token: TokenDetails;
  scopes: ReadonlySet<string>;
  /**
   * The acting user's organization ids (ascending), read with the token: the scope of every data read. Passed on as
   * the store returned it, since it may carry their field total (OrganizationIds).
   */
  organizationIds: OrganizationIds;
}

/** The WWW-Authenticate challenge of the DPoP scheme (RFC 9449 §7.1), naming the algorithms a proof may use. */
export function dpopChallenge(error?: string): string {
  const algs = `algs="${DPOP_ALGORITHMS.join(" ")}"`;
  return error === undefined ? `DPoP ${algs}` : `DPoP error="${error}", ${algs}`;
}

/** The challenges of a token that is not live, one per scheme. */
const INVALID_BEARER = bearerChallenge("invalid_token");
const INVALID_DPOP = dpopChallenge("invalid_token");

// RFC 9449 §7.1: the DPoP scheme carries the token as token68, like Bearer.
const DPOP_SCHEME = /^DPoP(?: |$)/i;
const DPOP_TOKEN = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Authenticates the request's access token: a Bearer token that is not DPoP-bound, or a DPoP-bound token sent with
 * the DPoP scheme and a proof of its key.
 * @throws OAuthError invalid_token (401; no error attribute when no token was sent), invalid_dpop_proof (401),
 * invalid_request (400)
 */
export async function authenticateBearer(deps: Deps, request: Request, url: URL): Promise<AccessContext> {
  const token = readBearer(request, url);
  if (token !== undefined) {
    const found = await findLive(deps, token, INVALID_BEARER);
    // RFC 9449 §7.2: a bound token is worthless without its key's proof, so presented as Bearer it is refused.
    if (found.dpopJkt !== null) throw dpopRefusal("This access token is DPoP-bound: send it as DPoP with a proof");
    return accessOf(found);
  }
  const dpopToken = readDpopToken(request);
  if (dpopToken === undefined) {
    // RFC 6750 §3.1: a request without credentials gets a bare challenge, no error code.
    throw invalidToken("Bearer token required", { headers: { "www-authenticate": bearerChallenge() } });
  }
  return accessOf(await authenticateDpop(deps, request, { url, token: dpopToken }));
}

/** The live access token `token` names, or invalid_token with `challenge`. */
async function findLive(deps: Deps, token: string, challenge: string) {
  const key = await tokenKey(deps, token);
  const found = await deps.store.tokens.findActiveAccess(key, nowSeconds(deps.clock));
  if (!found) {
    throw invalidToken("The access token is invalid, expired or revoked", { headers: { "www-authenticate": challenge } });
  }
  return found;
}

/** The token of an `Authorization: DPoP` header, or undefined for any other scheme. */
function readDpopToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  if (header === null || !DPOP_SCHEME.test(header)) return undefined;
  const match = DPOP_TOKEN.exec(header);
  if (match) return match[1];
  throw badRequest("Authorization header must be: DPoP <token>", {
    headers: { "www-authenticate": dpopChallenge("invalid_request") },
  });
}

/** A DPoP token: live, bound, and presented with a fresh proof of its key carrying its hash (RFC 9449 §7.1). */
async function authenticateDpop(deps: Deps, request: Request, { url, token }: { url: URL; token: string }) {
  const found = await findLive(deps, token, INVALID_DPOP);
  if (found.dpopJkt === null) {
    throw invalidToken("This access token is not DPoP-bound", { headers: { "www-authenticate": INVALID_DPOP } });
  }
  let jkt: string | undefined;
  try {
    jkt = await spendDpopProof(deps, request, { path: url.pathname, accessToken: token });
  } catch (error) {
    // The token endpoint answers a bad proof with 400; a resource answers it with a 401 challenge (RFC 9449 §7.1,
    // §9), keeping the DPoP-Nonce header of a nonce refusal.
    if (isOAuthError(error) && error.code === "invalid_dpop_proof") throw dpopRefusal(error.description, error);
    if (isOAuthError(error) && error.code === "use_dpop_nonce") {
      throw new OAuthError("use_dpop_nonce", error.description, {
        status: 401,
        headers: { ...error.headers, "www-authenticate": dpopChallenge("use_dpop_nonce") },
        cause: error,
      });
    }
    throw error;
  }
  if (jkt === undefined) throw dpopRefusal("A DPoP token needs a DPoP proof");
  if (jkt !== found.dpopJkt) throw dpopRefusal("The DPoP proof is signed by another key than the token is bound to");
  return found;
}

function dpopRefusal(description: string, cause?: OAuthError): OAuthError {
  return invalidDpopProof(description, { status: 401, headers: { "www-authenticate": dpopChallenge("invalid_dpop_proof") }, cause });
}

function accessOf(found: TokenDetails & { organizationIds: OrganizationIds }): AccessContext {
  return { token: found, scopes: new Set(found.scope.split(" ")), organizationIds: found.organizationIds };
}

/** @throws OAuthError insufficient_scope (403) naming the missing scope (RFC 6750 §3.1). */
export function requireScope(access: AccessContext, scope: string): void {
  if (!access.scopes.has(scope)) {
    throw insufficientScope(`The access token lacks the ${scope} scope`, {
      headers: { "www-authenticate": bearerChallenge("insufficient_scope", { scope }) },
    });
  }
}
