import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { BASE, postJson } from "../helpers/requests.ts";
import { codeBody, issueCode } from "../helpers/codes.ts";
import { mintAccessToken } from "../helpers/tokens.ts";

type Kind = "code access" | "client credentials access" | "refresh" | "revoked access" | "expired access" | "another client's access" | "unknown" | "malformed";
type Endpoint = "/graphql" | "/oauth/token/info" | "/oauth/introspect" | "/oauth/revoke";

interface World {
  t: TestApp;
  /** The client calling /oauth/introspect and /oauth/revoke; it owns the code, refresh, revoked and expired tokens. */
  caller: SeededClient;
  /** The client credentials client that owns the client credentials token. */
  cc: SeededClient;
  tokens: Record<Kind, string>;
}

async function codePair(t: TestApp, client: SeededClient, userId: number) {
  const issued = await issueCode(t, client, { userId });
  const res = await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)));
  assert.equal(res.status, 200);
  return await res.json() as { access_token: string; refresh_token: string };
}

async function world(): Promise<World> {
  const t = await openTestApp();
  await t.seed.fields(2);
  const user = await t.seed.user();
  const caller = await t.seed.client();
  const other = await t.seed.client({ redirectUri: "https://other.example/cb", name: "Other app" });
  const cc = await t.seed.client({ grant: "client_credentials" });
  const own = await codePair(t, caller, user.id);
  const toRevoke = await codePair(t, caller, user.id);
  const revoke = await t.app.fetch(postJson("/oauth/revoke", { client_id: caller.clientId, client_secret: caller.clientSecret, token: toRevoke.access_token }));
  assert.equal(revoke.status, 200);
  const expired = await mintAccessToken(t, { client: caller.client, userId: user.id, grantType: "authorization_code", ttl: 60 });
  const ccRes = await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: cc.clientId, client_secret: cc.clientSecret }));
  const theirs = await codePair(t, other, user.id);
  t.clock.advance(61);
  return {
    t,
    caller,
    cc,
    tokens: {
      "code access": own.access_token,
      "client credentials access": (await ccRes.json()).access_token,
      refresh: own.refresh_token,
      "revoked access": toRevoke.access_token,
      "expired access": expired,
      "another client's access": theirs.access_token,
      unknown: "fgat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      malformed: "not a token; {}",
    },
  };
}

/** What one request achieved: a short, comparable outcome. */
async function call(w: World, endpoint: Endpoint, token: string): Promise<string> {
  const app = w.t.app;
  const creds = { client_id: w.caller.clientId, client_secret: w.caller.clientSecret };
  if (endpoint === "/graphql" || endpoint === "/oauth/token/info") {
    const init: RequestInit = endpoint === "/graphql"
      ? { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ fields { total_count } }" }) }
      : { headers: { authorization: `Bearer ${token}` } };
    const res = await app.fetch(new Request(`${BASE}${endpoint}`, init));
    const body = await res.json() as { data?: unknown; error?: string };
    if (res.status === 200) return body.data === undefined && endpoint === "/graphql" ? "200 without data" : "ok";
    return `${res.status} ${body.error}`;
  }
  if (endpoint === "/oauth/introspect") {
    const res = await app.fetch(postJson(endpoint, { ...creds, token }));
    assert.equal(res.status, 200);
    return (await res.json()).active ? "active" : "inactive";
  }
  // Revocation: the answer and its effect, seen through the owner's eyes afterwards.
  const res = await app.fetch(postJson(endpoint, { ...creds, token }));
  const body = await res.json() as { error?: string };
  const after = await app.fetch(new Request(`${BASE}/oauth/token/info`, { headers: { authorization: `Bearer ${w.tokens["code access"]}` } }));
  const answer = res.status === 200 ? "200" : `${res.status} ${body.error}`;
  return token === w.tokens["code access"] || token === w.tokens.refresh ? `${answer}, ${after.status === 200 ? "still live" : "dead"}` : answer;
}

// The rightful combinations, spelled out. Bearer endpoints accept any live access token, whoever holds it
// (RFC 6750 §1.2: possession is the credential); client endpoints only act on the caller's own tokens
// (RFC 7662 §2.2, RFC 7009 §2.1).
const EXPECTED: Record<Endpoint, Record<Kind, string>> = {
  "/graphql": {
    "code access": "ok",
    "client credentials access": "ok",
    refresh: "401 invalid_token",
    "revoked access": "401 invalid_token",
    "expired access": "401 invalid_token",
    "another client's access": "ok",
    unknown: "401 invalid_token",
    malformed: "400 invalid_request",
  },
  "/oauth/token/info": {
    "code access": "ok",
    "client credentials access": "ok",
    refresh: "401 invalid_token",
    "revoked access": "401 invalid_token",
    "expired access": "401 invalid_token",
    "another client's access": "ok",
    unknown: "401 invalid_token",
    malformed: "400 invalid_request",
  },
  "/oauth/introspect": {
    "code access": "active",
    "client credentials access": "inactive",
    refresh: "active",
    "revoked access": "inactive",
    "expired access": "inactive",
    "another client's access": "inactive",
    unknown: "inactive",
    malformed: "inactive",
  },
  "/oauth/revoke": {
    "code access": "200, dead",
    "client credentials access": "403 unauthorized_client",
    // A refresh token takes its family, and with it the access token issued alongside.
    refresh: "200, dead",
    "revoked access": "200",
    "expired access": "200",
    "another client's access": "403 unauthorized_client",
    unknown: "200",
    malformed: "200",
  },
};

for (const [endpoint, row] of Object.entries(EXPECTED) as [Endpoint, Record<Kind, string>][]) {
  for (const [kind, expected] of Object.entries(row) as [Kind, string][]) {
    test(`${endpoint} with ${kind} token: ${expected}`, async () => {
      const w = await world();
      assert.equal(await call(w, endpoint, w.tokens[kind]), expected);
    });
  }
}

test("another client's revocation attempt leaves the token working", async () => {
  const w = await world();
  const theirs = w.tokens["another client's access"];
  assert.equal(await call(w, "/oauth/revoke", theirs), "403 unauthorized_client");
  assert.equal(await call(w, "/oauth/token/info", theirs), "ok");
});

test("the client credentials token is active when its own client introspects it", async () => {
  const w = await world();
  const res = await w.t.app.fetch(postJson("/oauth/introspect", {
    client_id: w.cc.clientId, client_secret: w.cc.clientSecret, token: w.tokens["client credentials access"],
  }));
  assert.equal((await res.json()).active, true);
});
