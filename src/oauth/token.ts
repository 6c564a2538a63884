// POST /oauth/token (RFC 6749 §3.2): reads the body, authenticates the client, dispatches on grant_type.
import type { Deps, Responders } from "../deps.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../config.ts";
import type { Handler } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import type { TokenClient } from "../store/contract.ts";
import { authenticateClient, refuseQueryCredentials } from "./client_auth.ts";
import { invalidDpopProof, invalidRequest, OAuthError, unsupportedGrantType } from "./errors.ts";
import type { GrantRequest, GrantResult, MintedTokens } from "./issue_tokens.ts";
import { spendDpopProof } from "./dpop_check.ts";
import { exchangeAuthorizationCode } from "./grants/authorization_code.ts";
import { exchangeRefreshToken } from "./grants/refresh_token.ts";
import { issueClientCredentials } from "./grants/client_credentials.ts";

/** The parameters the token endpoint reads (RFC 6749 §4.1.3, §4.4.2, §6; RFC 7636 §4.5); others are ignored. */
const TOKEN_PARAMS = [
  "grant_type",
  "client_id",
  "client_secret",
  "code",
  "redirect_uri",
  "code_verifier",
  "refresh_token",
  "scope",
] as const;

type Grant = (deps: Deps, options: GrantRequest) => Promise<GrantResult>;

/** Supported grants; a Map so a grant_type like "constructor" cannot reach an object prototype. */
const GRANTS = new Map<string, Grant>([
  ["authorization_code", exchangeAuthorizationCode],
  ["refresh_token", exchangeRefreshToken],
  ["client_credentials", issueClientCredentials],
]);

/** The supported grant type names, for the metadata document. */
export const GRANT_TYPES: readonly string[] = [...GRANTS.keys()];

/** Handler for POST /oauth/token; errors are rendered by app.ts as RFC 6749 §5.2 JSON. */
export function tokenEndpoint(deps: Deps): Handler {
  return async (request, ctx) => {
    refuseQueryCredentials(ctx.url);
    const params = await readParams(request, deps.config.maxBodyBytes, { recognized: TOKEN_PARAMS });
    const grantType = params.grant_type;
    if (grantType === undefined) throw invalidRequest("Missing parameter: grant_type");
    const grant = GRANTS.get(grantType);
    if (!grant) {
      throw unsupportedGrantType(
        "grant_type must be authorization_code, refresh_token or client_credentials",
      );
    }
    // A client_credentials request may be authenticated from the client's row as the store last read it, since its
    // issuance re-checks that row (TokenClient.remembered); a refusal on such a row is decided again on a fresh read.
    const authenticated = await authenticateClient(deps, request, { params, ctx, fromMemory: grantType === "client_credentials" });
    // RFC 9449 §5: a proof binds the access token to its key; a client that sends none gets a Bearer token. Spent
    // once, before the first decision, whichever read that decision is on.
    const dpopJkt = await spendDpopProof(deps, request, { path: "/oauth/token" });
    const decide = async (client: TokenClient) => {
      if (dpopJkt === undefined && client.requireDpop) throw invalidDpopProof("This client must send a DPoP proof");
      const result = await grant(deps, { client, params, ip: ctx.clientIp, dpopJkt });
      return tokenResponse(deps.respond, result.minted, result.scope);
    };
    if (!authenticated.remembered) return await decide(authenticated);
    try {
      return await decide(authenticated);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return await decide(await authenticateClient(deps, request, { params, ctx }));
    }
  };
}

/**
 * The token response in Doorkeeper's shape: created_at in Unix seconds, refresh_token absent (not null) when none
 * was issued; no-store headers per RFC 6749 §5.1.
 */
function tokenResponse(respond: Responders, minted: MintedTokens, scope: string): Response {
  const body: Record<string, string | number> = {
    access_token: minted.accessToken,
    token_type: minted.dpopJkt === undefined ? "Bearer" : "DPoP",
    expires_in: ACCESS_TOKEN_TTL_SECONDS[minted.grantType],
  };
  if (minted.refreshToken !== undefined) body.refresh_token = minted.refreshToken;
  body.scope = scope;
  body.created_at = minted.issuedAt;
  return respond.jsonNoStore(body);
}
