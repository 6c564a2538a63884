import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import {
  authCodeTokens,
  ccRequest,
  clientCredentialsToken,
  codeBody,
  issueCode,
  refreshBody,
  tokenInfo,
} from "../helpers/codes.ts";

// The service spec §3 state table, one test per row, with the spec's JSON bodies. Liveness of access tokens
// is observed through /oauth/token/info; of refresh tokens through the refresh grant.

async function live(t: TestApp, access: string): Promise<boolean> {
  const res = await tokenInfo(t, access);
  await res.body?.cancel();
  return res.status === 200;
}

const ROWS: { row: string; run: (t: TestApp) => Promise<void> }[] = [
  {
    row:
      "(none) + authorization_code with valid client, secret, code, redirect URI -> access (8 h) and refresh active",
    run: async (t) => {
      const client = await t.seed.client();
      const res = await t.app.fetch(postJson("/oauth/token", codeBody(client, await issueCode(t, client))));
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.expires_in, 28_800);
      assert.ok(await live(t, body.access_token));
      const refreshed = await t.app.fetch(postJson("/oauth/token", refreshBody(client, body.refresh_token)));
      assert.equal(refreshed.status, 200);
    },
  },
  {
    row: "(none) + client_credentials with valid id and secret -> access active (30 min), no refresh token",
    run: async (t) => {
      const { tokens } = await clientCredentialsToken(t);
      assert.equal(tokens.expires_in, 1_800);
      assert.equal("refresh_token" in tokens, false);
      assert.ok(await live(t, tokens.access_token));
    },
  },
  {
    row: "access active (authorization code) + 8 hours -> expired",
    run: async (t) => {
      const { tokens } = await authCodeTokens(t);
      t.clock.advance(28_799);
      assert.ok(await live(t, tokens.access_token));
      t.clock.advance(1);
      assert.equal(await live(t, tokens.access_token), false);
    },
  },
  {
    row: "access active (client credentials) + 30 minutes -> expired",
    run: async (t) => {
      const { tokens } = await clientCredentialsToken(t);
      t.clock.advance(1_799);
      assert.ok(await live(t, tokens.access_token));
      t.clock.advance(1);
      assert.equal(await live(t, tokens.access_token), false);
    },
  },
  {
    row:
      "refresh active + refresh_token with valid id, secret, redirect URI, token -> new access active, new pair",
    run: async (t) => {
      const { client, tokens } = await authCodeTokens(t);
      const res = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.ok(body.refresh_token && body.refresh_token !== tokens.refresh_token);
      assert.ok(await live(t, body.access_token));
    },
  },
  {
    row: "access active + revoke with hint access_token -> revoked; client credentials stay valid",
    run: async (t) => {
      const { client, tokens } = await clientCredentialsToken(t);
      const res = await t.app.fetch(postJson("/oauth/revoke", {
        token_type_hint: "access_token",
        client_id: client.clientId,
        client_secret: client.clientSecret,
        token: tokens.access_token,
      }));
      assert.equal(res.status, 200);
      assert.equal(await live(t, tokens.access_token), false);
      const again = await t.app.fetch(ccRequest(client));
      assert.equal(again.status, 200);
    },
  },
  {
    row: "refresh active + revoke with hint refresh_token -> revoked; it can no longer obtain access tokens",
    run: async (t) => {
      const { client, tokens } = await authCodeTokens(t);
      const res = await t.app.fetch(postJson("/oauth/revoke", {
        token_type_hint: "refresh_token",
        client_id: client.clientId,
        client_secret: client.clientSecret,
        token: tokens.refresh_token,
      }));
      assert.equal(res.status, 200);
      const refreshed = await t.app.fetch(
        postJson("/oauth/token", refreshBody(client, tokens.refresh_token)),
      );
      assert.equal(refreshed.status, 400);
      assert.equal((await refreshed.json()).error, "invalid_grant");
    },
  },
  {
    row: "expired (client credentials) + client_credentials with valid credentials -> new access active",
    run: async (t) => {
      const { client, tokens } = await clientCredentialsToken(t);
      t.clock.advance(1_800);
      assert.equal(await live(t, tokens.access_token), false);
      const res = await t.app.fetch(ccRequest(client));
      assert.equal(res.status, 200);
      assert.ok(await live(t, (await res.json()).access_token));
    },
  },
];

for (const { row, run } of ROWS) {
  test(`spec §3: ${row}`, async () => run(await openTestApp()));
}
