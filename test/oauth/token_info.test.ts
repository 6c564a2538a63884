import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { get } from "../helpers/requests.ts";
import { authCodeTokens, tokenInfo } from "../helpers/codes.ts";

test("token info answers in Doorkeeper's shape with the remaining lifetime", async () => {
  const t = await openTestApp();
  const { client, tokens, issued } = await authCodeTokens(t);
  t.clock.advance(800);
  const res = await tokenInfo(t, tokens.access_token);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(await res.json(), {
    resource_owner_id: issued.userId,
    scope: ["fields:read"],
    expires_in: 28_000,
    application: { uid: client.clientId },
    created_at: tokens.created_at,
  });
});

test("token info: valid one second before 28800 s, invalid_token at 28800 s", async () => {
  const t = await openTestApp();
  const { tokens } = await authCodeTokens(t);
  t.clock.advance(28_799);
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 200);
  t.clock.advance(1);
  const res = await tokenInfo(t, tokens.access_token);
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_token");
});

const ROWS = [
  {
    name: "no Authorization header",
    request: () => get("/oauth/token/info"),
    status: 401,
    error: "invalid_token",
    challenge: 'Bearer realm="fieldgate"',
  },
  {
    name: "the token as a query parameter",
    request: (tok: string) => get(`/oauth/token/info?access_token=${tok}`),
    status: 400,
    error: "invalid_request",
    challenge: 'Bearer realm="fieldgate", error="invalid_request"',
  },
  {
    name: "a refresh token as bearer",
    request: (_a: string, r: string) => get("/oauth/token/info", { authorization: `Bearer ${r}` }),
    status: 401,
    error: "invalid_token",
    challenge: 'Bearer realm="fieldgate", error="invalid_token"',
  },
  {
    name: "a Basic header",
    request: () => get("/oauth/token/info", { authorization: "Basic abc" }),
    status: 401,
    error: "invalid_token",
    challenge: 'Bearer realm="fieldgate"',
  },
  {
    name: "a Bearer header with bad characters",
    request: () => get("/oauth/token/info", { authorization: "Bearer fgat_<x>" }),
    status: 400,
    error: "invalid_request",
    challenge: 'Bearer realm="fieldgate", error="invalid_request"',
  },
];

for (const row of ROWS) {
  test(`token info refuses ${row.name}`, async () => {
    const t = await openTestApp();
    const { tokens } = await authCodeTokens(t);
    const res = await t.app.fetch(row.request(tokens.access_token, tokens.refresh_token));
    assert.equal(res.status, row.status);
    assert.equal(res.headers.get("www-authenticate"), row.challenge);
    assert.equal((await res.json()).error, row.error);
  });
}
