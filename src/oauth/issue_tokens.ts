// Minting token strings (stored only as digests) and shaping the token response (spec §2.1, RFC 6749 §5.1).
import type { Deps } from "../deps.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../config.ts";
import { jsonNoStore } from "../http/respond.ts";
import type { NewToken, TokenGrantType } from "../store/tokens.ts";
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

/**
 * The token response in Doorkeeper's shape: created_at in Unix seconds, refresh_token absent (not null) when none
 * was issued; no-store headers per RFC 6749 §5.1.
 */
export function tokenResponse(minted: MintedTokens, scope: string): Response {
  const body: Record<string, string | number> = {
    access_token: minted.accessToken,
    token_type: "Bearer",
    expires_in: ACCESS_TOKEN_TTL_SECONDS[minted.grantType],
  };
  if (minted.refreshToken !== undefined) body.refresh_token = minted.refreshToken;
  body.scope = scope;
  body.created_at = minted.issuedAt;
  return jsonNoStore(body);
}

/** What a grant hands the token endpoint: the minted credentials and the scope they carry. */
export interface GrantResult {
  minted: MintedTokens;
  scope: string;
}
