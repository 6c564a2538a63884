import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../../helpers/test_app.ts";
import { basicAuth, postForm, postJson } from "../../helpers/requests.ts";
import { ccCreds, ccRequest, type ErrorRow, testErrorRows, tokenInfo } from "../../helpers/codes.ts";

test("client_credentials issues a 1800 s token with no refresh_token key, acting as the integration user", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const res = await t.app.fetch(ccRequest(client));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("pragma"), "no-cache");
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ["access_token", "token_type", "expires_in", "scope", "created_at"]);
  assert.equal("refresh_token" in body, false);
  assert.equal(body.expires_in, 1_800);
  assert.equal(body.scope, "fields:read");
  const info = await (await tokenInfo(t, body.access_token)).json();
  assert.equal(info.resource_owner_id, client.client.integrationUserId);
});

test("client_credentials works with Basic and a form body", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const res = await t.app.fetch(
    postForm("/oauth/token", { grant_type: "client_credentials" }, {
      authorization: basicAuth(client.clientId, client.clientSecret),
    }),
  );
  assert.equal(res.status, 200);
});

test("client_credentials: a token is valid one second before 1800 s and invalid at 1800 s", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const body = await (await t.app.fetch(ccRequest(client))).json();
  t.clock.advance(1_799);
  const before = await tokenInfo(t, body.access_token);
  assert.equal(before.status, 200);
  assert.equal((await before.json()).expires_in, 1);
  t.clock.advance(1);
  assert.equal((await tokenInfo(t, body.access_token)).status, 401);
});

test("client_credentials: a new token may be requested before and after expiry", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const first = await (await t.app.fetch(ccRequest(client))).json();
  t.clock.advance(60);
  const second = await (await t.app.fetch(ccRequest(client))).json();
  assert.notEqual(second.access_token, first.access_token);
  assert.equal((await tokenInfo(t, first.access_token)).status, 200);
  t.clock.advance(1_800);
  const third = await t.app.fetch(ccRequest(client));
  assert.equal(third.status, 200);
  assert.equal((await tokenInfo(t, (await third.json()).access_token)).status, 200);
});

test("client_credentials: a requested subset of the registered scope is granted", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials", scope: "fields:read fields:write" });
  const body = await (await t.app.fetch(ccRequest(client, { scope: "fields:read" }))).json();
  assert.equal(body.scope, "fields:read");
});

test("client_credentials: a disabled integration user is invalid_grant", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  await t.store.users.setDisabled(client.client.integrationUserId!, true);
  const res = await t.app.fetch(ccRequest(client));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error, "invalid_grant");
});

const ERROR_ROWS: ErrorRow[] = [
  {
    name: "client_credentials: scope not registered",
    request: (f) =>
      postJson("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f), scope: "fields:write" }),
    status: 400,
    error: "invalid_scope",
  },
  {
    name: "client_credentials: scope with bad characters",
    request: (f) =>
      postJson("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f), scope: 'fields:read "x"' }),
    status: 400,
    error: "invalid_scope",
  },
  {
    name: "client_credentials: blank scope",
    request: (f) =>
      postJson("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f), scope: "   " }),
    status: 400,
    error: "invalid_scope",
  },
];

testErrorRows(ERROR_ROWS);
