// Minting token strings: the plaintext for the client once, digests for the store (token.ts shapes the response).
import type { Deps } from "../deps.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../config.ts";
import type { NewToken, TokenGrantType } from "../store/contract.ts";
import { mintBearerToken, tokenKey } from "./token_keys.ts";

/** Freshly minted credentials: the plaintext goes to the client once, the digests to the store. */
export interface MintedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  /** Rows for the store: digests only. */
  rows: NewToken[];
  grantType: TokenGrantType;
  issuedAt: number;
}

/** Mints an access token (and a refresh token unless `withRefresh` is false) for a grant issued at `now`. */
export async function mintTokens(
  deps: Deps,
  options: { grantType: TokenGrantType; scope: string; now: number; withRefresh: boolean },
): Promise<MintedTokens> {
  const { grantType, scope, now } = options;
  const accessToken = mintBearerToken(deps, "accessToken");
  const rows: NewToken[] = [{
    tokenHash: await tokenKey(deps, accessToken),
    kind: "access",
    grantType,
    scope,
    issuedAt: now,
    expiresAt: now + ACCESS_TOKEN_TTL_SECONDS[grantType],
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
  return { accessToken, refreshToken, rows, grantType, issuedAt: now };
}

/** What a grant hands the token endpoint: the minted credentials and the scope they carry. */
export interface GrantResult {
  minted: MintedTokens;
  scope: string;
}
