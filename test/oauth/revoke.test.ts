import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { BASE, basicAuth, postForm, postJson } from "../helpers/requests.ts";
import { authCodeTokens, ccRequest, clientCredentialsToken, refreshBody, tokenInfo } from "../helpers/codes.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

function revoke(t: TestApp, client: SeededClient, token: string, hint?: string) {
  const body: Record<string, string> = {
    token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  };
  if (hint !== undefined) body.token_type_hint = hint;
  return t.app.fetch(postJson("/oauth/revoke", body));
}

test("revoke an access token: 200 {} with no-store, the token dies at once, the client keeps working", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const res = await revoke(t, client, tokens.access_token, "access_token");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(await res.json(), {});
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401);
  const again = await t.app.fetch(ccRequest(client));
  assert.equal(again.status, 200);
  const events = await t.store.audit.list({});
  assert.ok(events.some((e) => e.event === "token_revoked" && e.clientId === client.clientId));
});

test("revoke an access token of an approval leaves its refresh token working", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  assert.equal((await revoke(t, client, tokens.access_token, "access_token")).status, 200);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401, "the access token is revoked");
  const res = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal(res.status, 200);
});

test("revoke a refresh token revokes its whole family, access tokens included (RFC 7009 §2.1)", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const rotated =
    await (await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)))).json();
  const res = await revoke(t, client, rotated.refresh_token, "refresh_token");
  assert.equal(res.status, 200);
  for (const access of [tokens.access_token, rotated.access_token]) {
    assert.equal((await tokenInfo(t, access)).status, 401);
  }
  const refresh = await t.app.fetch(postJson("/oauth/token", refreshBody(client, rotated.refresh_token)));
  assert.equal((await refresh.json()).error, "invalid_grant");
});

test("revoke finds the token despite a wrong hint", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  assert.equal((await revoke(t, client, tokens.access_token, "refresh_token")).status, 200);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401);
});

const UNKNOWN_HINTS = ["id_token", "urn:ietf:params:oauth:token-type:jwt", "ACCESS_TOKEN", "x".repeat(300)];

for (const hint of UNKNOWN_HINTS) {
  test(`revoke ignores the unknown hint ${JSON.stringify(hint.slice(0, 40))} and still revokes (RFC 7009 §2.1)`, async () => {
    const t = await openTestApp();
    const { client, tokens } = await authCodeTokens(t);
    const access = await revoke(t, client, tokens.access_token, hint);
    assert.equal(access.status, 200);
    assert.deepEqual(await access.json(), {});
    assert.equal((await tokenInfo(t, tokens.access_token)).status, 401);
    assert.equal((await revoke(t, client, tokens.refresh_token, hint)).status, 200);
    const refresh = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
    assert.equal((await refresh.json()).error, "invalid_grant");
  });
}

test("revoke accepts a form body with Basic", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const res = await t.app.fetch(
    postForm("/oauth/revoke", { token: tokens.access_token }, {
      authorization: basicAuth(client.clientId, client.clientSecret),
    }),
  );
  assert.equal(res.status, 200);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401);
});

test("revoke ignores unknown parameters of any shape, and repeated unknown form parameters (RFC 6749 §3.2)", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const json = { token: tokens.access_token, client_id: client.clientId, client_secret: client.clientSecret, extra: 1 };
  assert.equal((await t.app.fetch(postJson("/oauth/revoke", json))).status, 200);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 401);
  const again = await clientCredentialsToken(t);
  const form = new URLSearchParams({ token: again.tokens.access_token, client_id: again.client.clientId, client_secret: again.client.clientSecret });
  form.append("extra", "1");
  form.append("extra", "2");
  assert.equal((await t.app.fetch(postForm("/oauth/revoke", form.toString()))).status, 200);
  assert.equal((await tokenInfo(t, again.tokens.access_token)).status, 401);
});

test("revoke still refuses a recognized parameter that is repeated or not a string", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const creds = { client_id: client.clientId, client_secret: client.clientSecret };
  const nonString = await t.app.fetch(postJson("/oauth/revoke", { ...creds, token: [tokens.access_token] }));
  assert.equal(nonString.status, 400);
  assert.equal((await nonString.json()).error, "invalid_request");
  const form = new URLSearchParams({ ...creds, token: tokens.access_token });
  form.append("token", "fgat_other");
  const repeated = await t.app.fetch(postForm("/oauth/revoke", form.toString()));
  assert.equal(repeated.status, 400);
  assert.equal((await repeated.json()).error, "invalid_request");
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 200);
});

const OK_ROWS: { name: string; token: (t: TestApp, c: SeededClient, a: string) => Promise<string> }[] = [
  { name: "an unknown token", token: async () => "fgat_unknown" },
  { name: "an already revoked token", token: async (t, c, a) => (await revoke(t, c, a), a) },
  { name: "an expired token", token: async (t, _c, a) => (t.clock.advance(1_800), a) },
];

for (const row of OK_ROWS) {
  test(`revoke answers 200 {} for ${row.name}`, async () => {
    const t = await openTestApp();
    const { client, tokens } = await clientCredentialsToken(t);
    const res = await revoke(t, client, await row.token(t, client, tokens.access_token));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {});
  });
}

test("revoke refuses another client's token with 403 unauthorized_client and leaves it alive", async () => {
  const t = await openTestApp();
  const { tokens } = await clientCredentialsToken(t);
  const other = await t.seed.client();
  const res = await revoke(t, other, tokens.access_token);
  assert.equal(res.status, 403);
  assert.equal((await res.json()).error, "unauthorized_client");
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 200);
});

// Checked in client authentication itself: the store's revoke does not look at the client's state.
test("revoke refuses a disabled client's correct credentials with 401 invalid_client and revokes nothing", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  await t.store.clients.setDisabled(client.clientId, true);
  const res = await revoke(t, client, tokens.refresh_token, "refresh_token");
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
  assert.equal((await res.json()).error, "invalid_client");
  for (const token of [tokens.access_token, tokens.refresh_token]) {
    const row = await t.store.tokens.findByHash(await tokenKey(t.app.deps, token));
    assert.equal(row?.revokedAt, null, "neither the refresh token nor its family was revoked");
  }
  assert.ok(!(await t.store.audit.list({})).some((e) => e.event === "token_revoked"));
  await t.store.clients.setDisabled(client.clientId, false);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 200, "re-enabled, the client's tokens work again");
});

interface ErrorRow {
  name: string;
  request: (c: SeededClient, token: string) => Request;
  status: number;
  error: string;
}

const ERROR_ROWS: ErrorRow[] = [
  {
    name: "a wrong secret",
    request: (c, tok) =>
      postJson("/oauth/revoke", { token: tok, client_id: c.clientId, client_secret: "wrong" }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "a wrong Basic secret",
    request: (c, tok) =>
      postForm("/oauth/revoke", { token: tok }, { authorization: basicAuth(c.clientId, "wrong") }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "no client authentication",
    request: (_c, tok) => postJson("/oauth/revoke", { token: tok }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "a missing token",
    request: (c) => postJson("/oauth/revoke", { client_id: c.clientId, client_secret: c.clientSecret }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "the token in the URL",
    request: (c, tok) =>
      new Request(`${BASE}/oauth/revoke?token=${tok}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_id: c.clientId, client_secret: c.clientSecret }),
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "an unknown content type",
    request: (c, tok) =>
      new Request(`${BASE}/oauth/revoke`, {
        method: "POST",
        headers: { "content-type": "text/xml" },
        body: `${c.clientId}${tok}`,
      }),
    status: 415,
    error: "invalid_request",
  },
];

for (const row of ERROR_ROWS) {
  test(`revoke refuses ${row.name}: ${row.status} ${row.error}`, async () => {
    const t = await openTestApp();
    const { client, tokens } = await clientCredentialsToken(t);
    const res = await t.app.fetch(row.request(client, tokens.access_token));
    assert.equal(res.status, row.status);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal((await res.json()).error, row.error);
    // Every 401 carries the client challenge (RFC 9110 §15.5.2), whichever method the client tried.
    assert.equal(res.headers.get("www-authenticate"), row.status === 401 ? 'Basic realm="fieldgate"' : null);
    assert.equal((await tokenInfo(t, tokens.access_token)).status, 200);
  });
}
