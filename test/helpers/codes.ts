// Test helpers for the token endpoint: issue authorization codes directly in the store and obtain token pairs.
import { randomId, randomToken } from "../../src/crypto/random.ts";
import { sha256Base64Url, sha256Hex } from "../../src/crypto/hash.ts";
import { cryptoRandom } from "../../src/deps.ts";
import { test } from "./bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type SeededClient, type TestApp } from "./test_app.ts";
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
  options: { userId?: number; redirectUri?: string; scope?: string; verifier?: string; ttl?: number; dpopJkt?: string } = {},
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
    dpopJkt: options.dpopJkt ?? null,
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

/** A client_credentials token request (JSON body, credentials in the body) for a client. */
export function ccRequest(client: { clientId: string; clientSecret: string }, extra: Record<string, string> = {}): Request {
  return postJson("/oauth/token", {
    grant_type: "client_credentials",
    client_id: client.clientId,
    client_secret: client.clientSecret,
    ...extra,
  });
}

/** Seeds a client-credentials client and obtains a token for it. */
export async function clientCredentialsToken(t: TestApp) {
  const client = await t.seed.client({ grant: "client_credentials" });
  const res = await t.app.fetch(ccRequest(client));
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

export interface TokenFixture {
  t: TestApp;
  /** An authorization-code client holding `pair` and an unused `code`. */
  ac: SeededClient;
  /** A client-credentials client. */
  cc: SeededClient;
  /** Another authorization-code client with its own redirect URI. */
  other: SeededClient;
  code: IssuedCode;
  pair: TokenPair;
}

/** A fresh app with the clients, code and token pair most token-endpoint error rows need. */
export async function tokenFixture(): Promise<TokenFixture> {
  const t = await openTestApp();
  const { client: ac, tokens: pair } = await authCodeTokens(t);
  const cc = await t.seed.client({ grant: "client_credentials" });
  const other = await t.seed.client({ redirectUri: "https://other.example/cb" });
  const code = await issueCode(t, ac);
  return { t, ac, cc, other, code, pair };
}

/** One row of a table of refused token-endpoint requests (STYLE §9). */
export interface ErrorRow {
  name: string;
  request: (f: TokenFixture) => Request;
  status: number;
  error: string;
}

/** Body credentials of the fixture's authorization-code client. */
export const acCreds = (f: TokenFixture) => ({ client_id: f.ac.clientId, client_secret: f.ac.clientSecret });
/** Body credentials of the fixture's client-credentials client. */
export const ccCreds = (f: TokenFixture) => ({ client_id: f.cc.clientId, client_secret: f.cc.clientSecret });

/** Registers one test per row: status, RFC 6749 §5.2 body shape, no-store headers, no secret echoed. */
export function testErrorRows(rows: readonly ErrorRow[]): void {
  for (const row of rows) {
    test(`token refuses ${row.name}: ${row.status} ${row.error}`, async () => {
      const f = await tokenFixture();
      const res = await f.t.app.fetch(row.request(f));
      assert.equal(res.status, row.status);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal(res.headers.get("pragma"), "no-cache");
      assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
      const body = await res.json();
      assert.equal(body.error, row.error);
      assert.equal(typeof body.error_description, "string");
      assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
      const text = JSON.stringify(body);
      for (const secret of [f.ac.clientSecret, f.cc.clientSecret, f.code.code, f.pair.refresh_token]) {
        assert.ok(!text.includes(secret));
      }
    });
  }
}
