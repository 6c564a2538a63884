// Minting token strings: the plaintext for the client once, digests for the store (token.ts shapes the response).
import type { Deps } from "../deps.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../config.ts";
import type { NewToken, TokenClient, TokenGrantType } from "../store/contract.ts";
import type { Params } from "../http/body.ts";
import { mintBearerToken, tokenKey } from "./token_keys.ts";

/** Freshly minted credentials: the plaintext goes to the client once, the digests to the store. */
export interface MintedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  /** Rows for the store: digests only. */
  rows: NewToken[];
  grantType: TokenGrantType;
  issuedAt: number;
  /** The DPoP key thumbprint the access token is bound to (token_type DPoP); undefined for a Bearer token. */
  dpopJkt: string | undefined;
}

/**
 * Mints an access token (and a refresh token unless `withRefresh` is false) for a grant issued at `now`; with
 * `dpopJkt` the access token is bound to that key. A refresh token is never bound: fieldgate's clients are
 * confidential, and RFC 9449 §5 binds only a public client's refresh tokens.
 */
export async function mintTokens(
  deps: Deps,
  options: { grantType: TokenGrantType; scope: string; now: number; withRefresh: boolean; dpopJkt: string | undefined },
): Promise<MintedTokens> {
  const { grantType, scope, now, dpopJkt } = options;
  const accessToken = mintBearerToken(deps, "accessToken");
  const rows: NewToken[] = [{
    tokenHash: await tokenKey(deps, accessToken),
    kind: "access",
    grantType,
    scope,
    issuedAt: now,
    expiresAt: now + ACCESS_TOKEN_TTL_SECONDS[grantType],
    ...(dpopJkt === undefined ? {} : { dpopJkt }),
  }];
  let refreshToken: string | undefined;
  if (options.withRefresh) {
    refreshToken = mintBearerToken(deps, "refreshToken");
    rows.push({
      tokenHash: await tokenKey(deps, refreshToken),
      kind: "refresh",
      grantType,
      scope,
      issuedAt: now,
      expiresAt: now + deps.config.refreshTokenTtlSeconds,
    });
  }
  return { accessToken, refreshToken, rows, grantType, issuedAt: now, dpopJkt };
}

/** What every grant is given: the authenticated client, the request's parameters and address, and its proof's key. */
export interface GrantRequest {
  client: TokenClient;
  params: Params;
  ip: string;
  /** Thumbprint of the key of the request's checked DPoP proof; undefined without one. */
  dpopJkt: string | undefined;
}

/** What a grant hands the token endpoint: the minted credentials and the scope they carry. */
export interface GrantResult {
  minted: MintedTokens;
  scope: string;
}
