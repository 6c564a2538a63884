// POST /oauth/introspect (RFC 7662): a client asks whether one of its own tokens is active; a resource server, any.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { Handler } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import type { TokenClient, TokenDetails } from "../store/contract.ts";
import { isResourceServer } from "../store/rows.ts";
import { authenticateClient, refuseQueryCredentials } from "./client_auth.ts";
import { invalidRequest } from "./errors.ts";
import { tokenKey } from "./token_keys.ts";

/** The parameters this endpoint reads (RFC 7662 §2.1, client auth RFC 6749 §2.3.1); others are ignored (§3.2). */
const PARAMS = ["token", "token_type_hint", "client_id", "client_secret"] as const;

/**
 * A subject identifier that can never collide between a person and an integration user, even if an
 * integration user had a person's username: the kind is part of the value.
 */
export function subjectOf(token: Pick<TokenDetails, "userKind" | "userId">): string {
  return `${token.userKind === "integration" ? "integration" : "user"}:${token.userId}`;
}

/**
 * Whether the token is usable right now and the asker may know it (RFC 7662 §2.2: otherwise just inactive). A client
 * learns about its own tokens only; a resource server, the protected resource of §2.1, about every token.
 */
function isActive(token: TokenDetails, client: TokenClient, now: number): boolean {
  const mayAsk = token.clientId === client.id || isResourceServer(client);
  return mayAsk && token.revokedAt === null && token.expiresAt > now &&
    token.rotatedAt === null && !token.clientDisabled && !token.userDisabled;
}

/** Handler for POST /oauth/introspect; client-authenticated and throttled like the token endpoint. */
export function introspectEndpoint(deps: Deps): Handler {
  return async (request, ctx) => {
    refuseQueryCredentials(ctx.url);
    const params = await readParams(request, deps.config.maxBodyBytes, { recognized: PARAMS });
    const client = await authenticateClient(deps, request, { params, ctx });
    if (params.token === undefined) throw invalidRequest("Missing parameter: token");
    // RFC 7662 §2.1: the hint is optional and an unknown one is ignored; one digest lookup finds either kind.
    const token = await deps.store.tokens.findByHash(await tokenKey(deps, params.token));
    if (!token || !isActive(token, client, nowSeconds(deps.clock))) return deps.respond.jsonNoStore({ active: false });
    return deps.respond.jsonNoStore(introspectionOf(token));
  };
}

/**
 * The answer for an active token (RFC 7662 §2.2), the same whoever may ask. `sub` names the user the token acts for
 * (for client credentials, the client's integration user) and `username` that user's username, as Doorkeeper's
 * `resource_owner_id` and `username` did. The one place that says what a token is: a sender-constrained token
 * (RFC 9449) adds its `token_type` and `cnf` here.
 */
export function introspectionOf(token: TokenDetails): Record<string, unknown> {
  return {
    active: true,
    scope: token.scope,
    client_id: token.clientPublicId,
    username: token.username,
    // A refresh token is not a bearer credential for resource servers; saying so keeps them from accepting it.
    token_type: token.kind === "refresh" ? "refresh_token" : token.dpopJkt === null ? "Bearer" : "DPoP",
    exp: token.expiresAt,
    iat: token.issuedAt,
    sub: subjectOf(token),
    // RFC 9449 §6.2: a resource server must then demand a proof by this key.
    ...(token.dpopJkt === null ? {} : { cnf: { jkt: token.dpopJkt } }),
  };
}
