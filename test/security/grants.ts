// Test-side shortcuts to real credentials: codes minted straight into the store, tokens through the real endpoint.
import assert from "node:assert/strict";
import type { Store } from "../../src/store/contract.ts";
import type { SeededClient } from "../helpers/test_app.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { BASE } from "../helpers/requests.ts";

const REDIRECT = "https://client.example/cb";

/** Something that answers Requests: app.fetch, or a wrapper around a real socket. */
export type Fetch = (request: Request) => Promise<Response>;

/** Issues an authorization code for `userId` directly in the store, as the consent page would after approval. */
export async function issueCode(store: Store, client: SeededClient, userId: number, nowSeconds: number): Promise<string> {
  const code = `fgac_${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`;
  await store.codes.issue({
    codeHash: await sha256Hex(code),
    familyId: crypto.randomUUID(),
    clientId: client.client.id,
    userId,
    redirectUri: client.client.redirectUri ?? REDIRECT,
    scope: client.client.scope,
    codeChallenge: null,
    issuedAt: nowSeconds,
    expiresAt: nowSeconds + 60,
  });
  return code;
}

/** POSTs a JSON body to `path` on `base`. */
export function jsonPost(base: string, path: string, body: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

export interface TokenPair {
  access_token: string;
  refresh_token?: string;
}

/** Runs a token request that must succeed and returns the token response. */
export async function tokenRequest(fetch: Fetch, body: Record<string, string>, base = BASE): Promise<TokenPair> {
  const res = await fetch(jsonPost(base, "/oauth/token", body));
  const json = await res.json() as TokenPair & { error?: string };
  assert.equal(res.status, 200, `token request failed: ${json.error}`);
  return json;
}

/** Exchanges a fresh code for an access and refresh token. */
export async function codeTokens(fetch: Fetch, options: { store: Store; client: SeededClient; userId: number; now: number; base?: string }): Promise<TokenPair & { code: string }> {
  const code = await issueCode(options.store, options.client, options.userId, options.now);
  const pair = await tokenRequest(fetch, {
    grant_type: "authorization_code",
    client_id: options.client.clientId,
    client_secret: options.client.clientSecret,
    code,
    redirect_uri: options.client.client.redirectUri ?? REDIRECT,
  }, options.base);
  return { ...pair, code };
}

/** A client credentials access token. */
export async function clientCredentials(fetch: Fetch, client: SeededClient, base = BASE): Promise<string> {
  const pair = await tokenRequest(fetch, {
    grant_type: "client_credentials",
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }, base);
  return pair.access_token;
}
