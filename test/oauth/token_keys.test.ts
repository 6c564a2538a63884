// Timed access/refresh tokens and their stored keys; tokens issued in the earlier format keep working everywhere.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { randomToken } from "../../src/crypto/random.ts";
import { mintBearerToken, tokenKey } from "../../src/oauth/token_keys.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { authCodeTokens, refreshBody } from "../helpers/codes.ts";
import { graphqlRequest } from "../helpers/graphql.ts";
import { postJson } from "../helpers/requests.ts";

const TIMED = /^fg(at|rt)_[0-9a-f]{12}[A-Za-z0-9_-]{43}$/;

test("a token is its prefix, the clock's milliseconds as 12 hex digits and 256 random bits", async () => {
  const t = await openTestApp();
  const access = mintBearerToken(t.app.deps, "accessToken");
  const refresh = mintBearerToken(t.app.deps, "refreshToken");
  assert.match(access, TIMED);
  assert.ok(access.startsWith("fgat_") && refresh.startsWith("fgrt_"));
  assert.equal(parseInt(access.slice(5, 17), 16), t.clock.clock());
  assert.notEqual(access.slice(17), mintBearerToken(t.app.deps, "accessToken").slice(17));
});

test("a timed token is stored under ~, its time and its digest; an earlier token under its digest alone", async () => {
  const t = await openTestApp();
  const token = mintBearerToken(t.app.deps, "accessToken");
  const key = await tokenKey(t.app.deps, token);
  assert.equal(key, `~${token.slice(5, 17)}${await sha256Hex(token)}`);
  assert.ok(!key.includes(token.slice(17)), "the stored key must not contain the random part");
  const earlier = randomToken(t.app.deps.random, "accessToken");
  assert.equal(await tokenKey(t.app.deps, earlier), await sha256Hex(earlier));
  // A plain digest is hex, so it can never collide with a timed key.
  assert.match(await tokenKey(t.app.deps, earlier), /^[0-9a-f]{64}$/);
});

test("keys of later tokens sort after earlier ones, so the unique index grows at its right edge", async () => {
  const t = await openTestApp();
  const keys: string[] = [];
  for (let i = 0; i < 20; i++) {
    keys.push(await tokenKey(t.app.deps, mintBearerToken(t.app.deps, "accessToken")));
    t.clock.advance(1 + (i % 3));
  }
  assert.deepEqual([...keys].sort(), keys);
});

test("a presented token that only copies another token's time finds nothing", async () => {
  const t = await openTestApp();
  const { tokens } = await authCodeTokens(t);
  const forged = tokens.access_token.slice(0, 17) + "A".repeat(43);
  const res = await t.app.fetch(graphqlRequest(forged, { query: "{ fields { total_count } }" }));
  assert.equal(res.status, 401);
});

/** Stores an access and a refresh token the way fieldgate did before timed tokens: under their plain digest. */
async function legacyPair(t: TestApp) {
  // A real approval supplies the user, the client and the grant family the old tokens belong to.
  const { client, tokens } = await authCodeTokens(t);
  const issued = (await t.store.tokens.findByHash(await tokenKey(t.app.deps, tokens.access_token)))!;
  const access = randomToken(t.app.deps.random, "accessToken");
  const refresh = randomToken(t.app.deps.random, "refreshToken");
  const now = t.clock.nowSeconds();
  const row = { grantType: "authorization_code", scope: "fields:read", issuedAt: now } as const;
  assert.equal(await t.store.tokens.issue({
    clientId: issued.clientId,
    userId: issued.userId,
    familyId: issued.familyId,
    tokens: [
      { ...row, tokenHash: await sha256Hex(access), kind: "access", expiresAt: now + 3600 },
      { ...row, tokenHash: await sha256Hex(refresh), kind: "refresh", expiresAt: now + 86_400 },
    ],
  }), "issued");
  return { client, access, refresh };
}

test("an access token of the earlier format still reads, introspects and revokes", async () => {
  const t = await openTestApp();
  const { client, access } = await legacyPair(t);
  const read = await t.app.fetch(graphqlRequest(access, { query: "{ fields { total_count } }" }));
  assert.equal(read.status, 200);
  const creds = { client_id: client.clientId, client_secret: client.clientSecret };
  const introspected = await (await t.app.fetch(postJson("/oauth/introspect", { token: access, ...creds }))).json();
  assert.equal(introspected.active, true);
  assert.equal((await t.app.fetch(postJson("/oauth/revoke", { token: access, ...creds }))).status, 200);
  assert.equal((await t.app.fetch(graphqlRequest(access, { query: "{ fields { total_count } }" }))).status, 401);
});

test("a refresh token of the earlier format rotates into timed tokens", async () => {
  const t = await openTestApp();
  const { client, refresh } = await legacyPair(t);
  const res = await t.app.fetch(postJson("/oauth/token", refreshBody(client, refresh)));
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  assert.match(body.access_token, TIMED);
  assert.match(body.refresh_token, TIMED);
  // The old one is spent: presenting it again is reuse.
  assert.equal((await t.app.fetch(postJson("/oauth/token", refreshBody(client, refresh)))).status, 400);
});
