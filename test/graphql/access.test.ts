import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";
import { mintAccessToken } from "../helpers/tokens.ts";
import { BASE } from "../helpers/requests.ts";
import type { TestApp } from "../helpers/test_app.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

const QUERY = { query: "{ fields { total_count } }" };

interface AccessRow {
  name: string;
  /** Builds the request; may change the world (revoke, disable, advance time). */
  request: (t: TestApp, token: string) => Promise<Request>;
  status: number;
  challenge: RegExp;
  error?: string;
}

const rows: AccessRow[] = [
  { name: "no Authorization header", request: async () => graphqlRequest(undefined, QUERY), status: 401, challenge: /^Bearer realm="fieldgate"$/, error: "invalid_token" },
  { name: "another scheme", request: async () => graphqlRequest(undefined, QUERY, { authorization: "Basic Zm9vOmJhcg==" }), status: 401, challenge: /^Bearer realm="fieldgate"$/, error: "invalid_token" },
  { name: "malformed bearer value", request: async () => graphqlRequest(undefined, QUERY, { authorization: "Bearer a b c" }), status: 400, challenge: /error="invalid_request"/, error: "invalid_request" },
  { name: "unknown token", request: async () => graphqlRequest("fgat_unknownunknownunknown", QUERY), status: 401, challenge: /error="invalid_token"/, error: "invalid_token" },
  {
    name: "token in the query string",
    request: async (_t, token) => new Request(`${BASE}/graphql?access_token=${token}&query=%7B__typename%7D`),
    status: 400,
    challenge: /error="invalid_request"/,
    error: "invalid_request",
  },
  {
    name: "revoked token",
    request: async (t, token) => {
      const found = await t.store.tokens.findByHash(await tokenKey(t.app.deps, token));
      await t.store.tokens.revoke(await tokenKey(t.app.deps, token), found!.clientId, t.clock.nowSeconds());
      return graphqlRequest(token, QUERY);
    },
    status: 401,
    challenge: /error="invalid_token"/,
    error: "invalid_token",
  },
  {
    name: "expired token",
    request: async (t, token) => {
      t.clock.advance(1800);
      return graphqlRequest(token, QUERY);
    },
    status: 401,
    challenge: /error="invalid_token"/,
    error: "invalid_token",
  },
  {
    name: "disabled acting user",
    request: async (t, token) => {
      const found = await t.store.tokens.findByHash(await tokenKey(t.app.deps, token));
      await t.store.users.setDisabled(found!.userId, true);
      return graphqlRequest(token, QUERY);
    },
    status: 401,
    challenge: /error="invalid_token"/,
    error: "invalid_token",
  },
  {
    name: "token without fields:read",
    request: async (t) => {
      const { client } = await t.seed.client({ grant: "client_credentials", scope: "profile" });
      return graphqlRequest(await mintAccessToken(t, { client, scope: "profile" }), QUERY);
    },
    status: 403,
    challenge: /error="insufficient_scope", scope="fields:read"/,
    error: "insufficient_scope",
  },
];

for (const row of rows) {
  test(`graphql refuses ${row.name}`, async () => {
    const { t, acmeToken } = await buildWorld();
    const res = await t.app.fetch(await row.request(t, acmeToken));
    assert.equal(res.status, row.status);
    assert.match(res.headers.get("www-authenticate") ?? "", row.challenge);
    const body = await res.json();
    assert.equal(body.error, row.error);
    assert.ok(!("data" in body));
  });
}

test("graphql refuses a token whose client was disabled", async () => {
  const { t, acmeToken } = await buildWorld();
  const found = await t.store.tokens.findByHash(await tokenKey(t.app.deps, acmeToken));
  await t.store.clients.setDisabled(found!.clientPublicId, true);
  const res = await t.app.fetch(graphqlRequest(acmeToken, QUERY));
  assert.equal(res.status, 401);
  assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
});

test("the spec's example request answers 200 with the total count", async () => {
  const { t, acmeToken, acmeFieldCount } = await buildWorld();
  const res = await t.app.fetch(new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${acmeToken}` },
    body: '{"query":"{ fields { total_count } }"}',
  }));
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(await res.text(), `{"data":{"fields":{"total_count":${acmeFieldCount}}}}`);
});

const expiryRows = [
  { name: "a client-credentials token", grantType: "client_credentials" as const, ttl: 1800 },
  { name: "an authorization-code token", grantType: "authorization_code" as const, ttl: 28_800 },
];

for (const row of expiryRows) {
  test(`${row.name} works 1 s before ${row.ttl} s and is refused at ${row.ttl} s`, async () => {
    const { t } = await buildWorld();
    const { client } = await t.seed.client({ grant: row.grantType === "client_credentials" ? "client_credentials" : "authorization_code" });
    const person = await t.seed.user();
    const userId = row.grantType === "client_credentials" ? undefined : person.id;
    const token = await mintAccessToken(t, { client, userId, grantType: row.grantType });
    t.clock.advance(row.ttl - 1);
    assert.equal((await t.app.fetch(graphqlRequest(token, QUERY))).status, 200);
    t.clock.advance(1);
    const res = await t.app.fetch(graphqlRequest(token, QUERY));
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  });
}

test("a client-credentials token acts as the integration user, a code token as the approving user", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  const query = { query: "{ viewer { username is_integration application { name } } }" };
  const robot = await (await t.app.fetch(graphqlRequest(acmeToken, query))).json();
  assert.equal(robot.data.viewer.is_integration, true);
  assert.match(robot.data.viewer.username, /^robot/);
  assert.equal(robot.data.viewer.application.name, "Nightly sync");
  const person = await (await t.app.fetch(graphqlRequest(globexToken, query))).json();
  assert.equal(person.data.viewer.is_integration, false);
  assert.match(person.data.viewer.username, /^user/);
  assert.equal(person.data.viewer.application.name, "Field notes app");
});
