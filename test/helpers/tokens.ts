// mintAccessToken: stores an access token digest directly, so API tests need not run the OAuth flows.
import { mintBearerToken, tokenKey } from "../../src/oauth/token_keys.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../../src/config.ts";
import type { Client, TokenGrantType } from "../../src/store/contract.ts";
import type { TestApp } from "./test_app.ts";

export interface MintOptions {
  /** Acting user; defaults to the client's integration user (client credentials). */
  userId?: number;
  client: Client;
  scope?: string;
  /** Lifetime in seconds; defaults to the spec's lifetime for the grant type. */
  ttl?: number;
  grantType?: TokenGrantType;
}

/** Issues an access token as the token endpoint would and returns the plaintext token. */
export async function mintAccessToken(t: TestApp, options: MintOptions): Promise<string> {
  const grantType = options.grantType ?? "client_credentials";
  const userId = options.userId ?? options.client.integrationUserId;
  if (userId === null || userId === undefined) throw new TypeError("mintAccessToken needs a userId for this client");
  const token = mintBearerToken(t.app.deps, "accessToken");
  const issuedAt = t.clock.nowSeconds();
  const ttl = options.ttl ?? ACCESS_TOKEN_TTL_SECONDS[grantType];
  await t.store.tokens.issue({
    clientId: options.client.id,
    userId,
    familyId: null,
    tokens: [{
      tokenHash: await tokenKey(t.app.deps, token),
      kind: "access",
      grantType,
      scope: options.scope ?? "fields:read",
      issuedAt,
      expiresAt: issuedAt + ttl,
    }],
  });
  return token;
}
