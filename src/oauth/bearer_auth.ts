// Bearer-token authentication for protected resources (RFC 6750): header -> digest -> live access token.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { bearerChallenge, readBearer } from "../http/bearer.ts";
import { insufficientScope, invalidToken } from "./errors.ts";
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

/**
 * Authenticates the request's bearer token.
 * @throws OAuthError invalid_token (401; no error attribute when no token was sent), invalid_request (400)
 */
export async function authenticateBearer(deps: Deps, request: Request, url: URL): Promise<AccessContext> {
  const token = readBearer(request, url);
  if (token === undefined) {
    // RFC 6750 §3.1: a request without credentials gets a bare challenge, no error code.
    throw invalidToken("Bearer token required", { headers: { "www-authenticate": bearerChallenge() } });
  }
  const key = await tokenKey(deps, token);
  const found = await deps.store.tokens.findActiveAccess(key, nowSeconds(deps.clock));
  if (!found) {
    throw invalidToken("The access token is invalid, expired or revoked", {
      headers: { "www-authenticate": bearerChallenge("invalid_token") },
    });
  }
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
