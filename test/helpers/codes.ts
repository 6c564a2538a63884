// Test helpers for the token endpoint: issue authorization codes directly in the store and obtain token pairs.
import { randomId, randomToken } from "../../src/crypto/random.ts";
import { sha256Base64Url, sha256Hex } from "../../src/crypto/hash.ts";
import { cryptoRandom } from "../../src/deps.ts";
import type { SeededClient, TestApp } from "./test_app.ts";
import { postJson } from "./requests.ts";

export interface IssuedCode {
  code: string;
  familyId: string;
  userId: number;
  redirectUri: string;
}

/**
 * Stores a fresh authorization code for `client` as the authorize page would; returns its plaintext. A
 * `verifier` makes it a PKCE S256 code.
 */
export async function issueCode(
  t: TestApp,
  client: SeededClient,
  options: { userId?: number; redirectUri?: string; scope?: string; verifier?: string; ttl?: number } = {},
): Promise<IssuedCode> {
  const userId = options.userId ?? (await t.seed.user()).id;
  const code = randomToken(cryptoRandom, "authorizationCode");
  const familyId = randomId(cryptoRandom);
  const redirectUri = options.redirectUri ?? client.client.redirectUri ?? "https://client.example/cb";
  const now = t.clock.nowSeconds();
  await t.store.codes.issue({
    codeHash: await sha256Hex(code),
    familyId,
    clientId: client.client.id,
    userId,
    redirectUri,
    scope: options.scope ?? client.client.scope,
    codeChallenge: options.verifier === undefined ? null : await sha256Base64Url(options.verifier),
    issuedAt: now,
    expiresAt: now + (options.ttl ?? t.config.codeTtlSeconds),
  });
  return { code, familyId, userId, redirectUri };
}

/** A valid RFC 7636 code_verifier (43 unreserved characters). */
export function makeVerifier(): string {
  return randomToken(cryptoRandom, "accessToken").slice(5).padEnd(43, "x");
}

/** The spec's JSON body for exchanging `code` (plus any extra parameters). */
export function codeBody(client: SeededClient, issued: IssuedCode, extra: Record<string, string> = {}) {
  return {
    grant_type: "authorization_code",
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: issued.redirectUri,
    code: issued.code,
    ...extra,
  };
}

/** The spec's JSON body for a refresh (with redirect_uri, as the spec lists it). */
export function refreshBody(client: SeededClient, refreshToken: string, extra: Record<string, string> = {}) {
  return {
    grant_type: "refresh_token",
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: client.client.redirectUri ?? "",
    refresh_token: refreshToken,
    ...extra,
  };
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  scope: string;
  expires_in: number;
  created_at: number;
}

/** Seeds an authorization-code client, issues a code and exchanges it; returns the client and the pair. */
export async function authCodeTokens(t: TestApp, options: { scope?: string } = {}) {
  const client = await t.seed.client({ scope: options.scope });
  const issued = await issueCode(t, client);
  const res = await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)));
  if (res.status !== 200) throw new Error(`code exchange failed: ${res.status} ${await res.text()}`);
  return { client, issued, tokens: (await res.json()) as TokenPair };
}

/** Seeds a client-credentials client and obtains a token for it. */
export async function clientCredentialsToken(t: TestApp) {
  const client = await t.seed.client({ grant: "client_credentials" });
  const res = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "client_credentials",
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }));
  if (res.status !== 200) throw new Error(`client credentials failed: ${res.status} ${await res.text()}`);
  return {
    client,
    tokens: (await res.json()) as { access_token: string; scope: string; expires_in: number },
  };
}

/** GET /oauth/token/info with the token as bearer; the status says whether it is live. */
export function tokenInfo(t: TestApp, accessToken: string): Promise<Response> {
  return t.app.fetch(
    new Request("http://fieldgate.test/oauth/token/info", {
      headers: { authorization: `Bearer ${accessToken}` },
    }),
  );
}
