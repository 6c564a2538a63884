import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { basicAuth, postForm, postJson } from "../helpers/requests.ts";
import { authCodeTokens, clientCredentialsToken, refreshBody } from "../helpers/codes.ts";
import { subjectOf } from "../../src/oauth/introspect.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

async function introspect(t: TestApp, client: SeededClient, token: string) {
  const res = await t.app.fetch(
    postJson("/oauth/introspect", { token, client_id: client.clientId, client_secret: client.clientSecret }),
  );
  return { res, body: await res.json() };
}

test("introspect describes an active access token of a person (RFC 7662 §2.2)", async () => {
  const t = await openTestApp();
  const { client, tokens, issued } = await authCodeTokens(t);
  const user = await t.store.users.findById(issued.userId);
  const { res, body } = await introspect(t, client, tokens.access_token);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(body, {
    active: true,
    scope: "fields:read",
    client_id: client.clientId,
    username: user!.username,
    token_type: "Bearer",
    exp: tokens.created_at + 28_800,
    iat: tokens.created_at,
    sub: `user:${issued.userId}`,
  });
});

test("introspect: an integration user's sub can never equal a person's", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const { body } = await introspect(t, client, tokens.access_token);
  assert.equal(body.active, true);
  assert.equal(body.sub, `integration:${client.client.integrationUserId}`);
  assert.equal(body.exp - body.iat, 1_800);
  assert.notEqual(
    subjectOf({ userKind: "integration", userId: 7 }),
    subjectOf({ userKind: "person", userId: 7 }),
  );
});

test("introspect reports a refresh token as active but not as a bearer token", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const { body } = await introspect(t, client, tokens.refresh_token);
  assert.equal(body.active, true);
  assert.equal(body.token_type, "refresh_token");
});

test("introspect accepts a form body with Basic", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const res = await t.app.fetch(
    postForm("/oauth/introspect", { token: tokens.access_token, token_type_hint: "whatever" }, {
      authorization: basicAuth(client.clientId, client.clientSecret),
    }),
  );
  assert.equal((await res.json()).active, true);
});

test("introspect ignores unknown parameters of any shape, and repeated unknown form parameters (RFC 6749 §3.2)", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const creds = { client_id: client.clientId, client_secret: client.clientSecret };
  const json = await t.app.fetch(postJson("/oauth/introspect", { ...creds, token: tokens.access_token, extra: { a: 1 } }));
  assert.equal(json.status, 200);
  assert.equal((await json.json()).active, true);
  const form = new URLSearchParams({ ...creds, token: tokens.access_token });
  form.append("extra", "1");
  form.append("extra", "2");
  const res = await t.app.fetch(postForm("/oauth/introspect", form.toString()));
  assert.equal(res.status, 200);
  assert.equal((await res.json()).active, true);
});

test("introspect still refuses a recognized parameter that is repeated or not a string", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  const creds = { client_id: client.clientId, client_secret: client.clientSecret };
  const nonString = await t.app.fetch(postJson("/oauth/introspect", { ...creds, token: tokens.access_token, token_type_hint: 7 }));
  assert.equal(nonString.status, 400);
  assert.equal((await nonString.json()).error, "invalid_request");
  const form = new URLSearchParams({ ...creds, token: tokens.access_token });
  form.append("token", "fgat_other");
  const repeated = await t.app.fetch(postForm("/oauth/introspect", form.toString()));
  assert.equal(repeated.status, 400);
  assert.equal((await repeated.json()).error, "invalid_request");
});

const INACTIVE: {
  name: string;
  prepare: (
    t: TestApp,
    c: SeededClient,
    tok: { access_token: string; refresh_token: string },
  ) => Promise<{ token: string; asker?: SeededClient }>;
}[] = [
  { name: "an unknown token", prepare: async () => ({ token: "fgat_nope" }) },
  {
    name: "an expired token (at exactly 28800 s)",
    prepare: async (t, _c, tok) => (t.clock.advance(28_800), { token: tok.access_token }),
  },
  {
    name: "a revoked token",
    prepare: async (t, c, tok) => {
      await t.app.fetch(
        postJson("/oauth/revoke", {
          token: tok.access_token,
          client_id: c.clientId,
          client_secret: c.clientSecret,
        }),
      );
      return { token: tok.access_token };
    },
  },
  {
    name: "a rotated refresh token",
    prepare: async (t, c, tok) => {
      await t.app.fetch(postJson("/oauth/token", refreshBody(c, tok.refresh_token)));
      return { token: tok.refresh_token };
    },
  },
  {
    name: "another client's token",
    prepare: async (t, _c, tok) => ({ token: tok.access_token, asker: await t.seed.client() }),
  },
  {
    name: "a token of a disabled user",
    prepare: async (t, c, tok) => {
      const details = await t.store.tokens.findByHash(await tokenKey(t.app.deps, tok.access_token));
      await t.store.users.setDisabled(details!.userId, true);
      void c;
      return { token: tok.access_token };
    },
  },
];

for (const row of INACTIVE) {
  test(`introspect answers exactly {active:false} for ${row.name}`, async () => {
    const t = await openTestApp();
    const { client, tokens } = await authCodeTokens(t);
    const { token, asker } = await row.prepare(t, client, tokens);
    const { res, body } = await introspect(t, asker ?? client, token);
    assert.equal(res.status, 200);
    assert.deepEqual(body, { active: false });
  });
}

test("introspect: exactly one second before expiry the token is still active", async () => {
  const t = await openTestApp();
  const { client, tokens } = await clientCredentialsToken(t);
  t.clock.advance(1_799);
  assert.equal((await introspect(t, client, tokens.access_token)).body.active, true);
  t.clock.advance(1);
  assert.deepEqual((await introspect(t, client, tokens.access_token)).body, { active: false });
});

// A disabled client learns nothing, not even {active:false}: its authentication fails before any token is looked up.
test("introspect refuses a disabled client's correct credentials with 401 invalid_client and discloses nothing", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  await t.store.clients.setDisabled(client.clientId, true);
  for (const token of [tokens.access_token, tokens.refresh_token, "fgat_nope"]) {
    const { res, body } = await introspect(t, client, token);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
    assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
    assert.equal(body.error, "invalid_client");
  }
});

const ERRORS = [
  {
    name: "a wrong secret",
    body: (c: SeededClient) => ({ token: "x", client_id: c.clientId, client_secret: "wrong" }),
    status: 401,
    error: "invalid_client",
  },
  { name: "no client authentication", body: () => ({ token: "x" }), status: 401, error: "invalid_client" },
  {
    name: "a missing token",
    body: (c: SeededClient) => ({ client_id: c.clientId, client_secret: c.clientSecret }),
    status: 400,
    error: "invalid_request",
  },
];

for (const row of ERRORS) {
  test(`introspect refuses ${row.name}: ${row.status} ${row.error}`, async () => {
    const t = await openTestApp();
    const client = await t.seed.client();
    const res = await t.app.fetch(postJson("/oauth/introspect", row.body(client)));
    assert.equal(res.status, row.status);
    assert.equal((await res.json()).error, row.error);
  });
}
