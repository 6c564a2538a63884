// A resource server (clients add --resource-server) checks other clients' tokens at /oauth/introspect and can obtain
// none itself (issue 37 part 1; RFC 7662 §2.1).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { basicAuth, postForm, postJson } from "../helpers/requests.ts";
import { authCodeTokens, clientCredentialsToken, codeBody, issueCode, refreshBody } from "../helpers/codes.ts";

async function introspect(t: TestApp, asker: SeededClient, token: string) {
  const res = await t.app.fetch(postForm("/oauth/introspect", { token }, {
    authorization: basicAuth(asker.clientId, asker.clientSecret),
  }));
  return { res, body: await res.json() };
}

/** Three clients' tokens: a person's through authorization code, and two integrations' through client credentials. */
async function threeClientsTokens(t: TestApp) {
  const web = await authCodeTokens(t);
  const sync = await clientCredentialsToken(t);
  const report = await clientCredentialsToken(t);
  return { web, sync, report };
}

test("a resource server sees the full answer for active tokens of three other clients", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { web, sync, report } = await threeClientsTokens(t);
  const person = await t.store.users.findById(web.issued.userId);
  const { res, body } = await introspect(t, rs, web.tokens.access_token);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(body, {
    active: true,
    scope: "fields:read",
    client_id: web.client.clientId,
    username: person!.username,
    token_type: "Bearer",
    exp: web.tokens.created_at + 28_800,
    iat: web.tokens.created_at,
    sub: `user:${web.issued.userId}`,
  });
  for (const cc of [sync, report]) {
    const integration = await t.store.users.findById(cc.client.client.integrationUserId!);
    const answer = (await introspect(t, rs, cc.tokens.access_token)).body;
    assert.equal(answer.active, true);
    assert.equal(answer.client_id, cc.client.clientId);
    // For client credentials the user the token acts for is the client's integration user.
    assert.equal(answer.sub, `integration:${integration!.id}`);
    assert.equal(answer.username, integration!.username);
    assert.equal(answer.token_type, "Bearer");
  }
});

test("a resource server sees a revoked token as inactive at the next introspection", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { sync } = await threeClientsTokens(t);
  assert.equal((await introspect(t, rs, sync.tokens.access_token)).body.active, true);
  const revoked = await t.app.fetch(postJson("/oauth/revoke", {
    token: sync.tokens.access_token,
    client_id: sync.client.clientId,
    client_secret: sync.client.clientSecret,
  }));
  assert.equal(revoked.status, 200);
  assert.deepEqual((await introspect(t, rs, sync.tokens.access_token)).body, { active: false });
});

test("a resource server sees an expired token as inactive", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { web, report } = await threeClientsTokens(t);
  t.clock.advance(1_800);
  assert.deepEqual((await introspect(t, rs, report.tokens.access_token)).body, { active: false });
  assert.equal((await introspect(t, rs, web.tokens.access_token)).body.active, true);
  t.clock.advance(28_800 - 1_800);
  assert.deepEqual((await introspect(t, rs, web.tokens.access_token)).body, { active: false });
});

test("an ordinary client still sees only its own tokens while a resource server sees them all", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { web, sync } = await threeClientsTokens(t);
  assert.deepEqual((await introspect(t, web.client, sync.tokens.access_token)).body, { active: false });
  assert.deepEqual((await introspect(t, sync.client, web.tokens.access_token)).body, { active: false });
  assert.equal((await introspect(t, sync.client, sync.tokens.access_token)).body.active, true);
  assert.equal((await introspect(t, rs, sync.tokens.access_token)).body.active, true);
});

test("a disabled resource server is refused with 401 invalid_client and learns nothing", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { sync } = await threeClientsTokens(t);
  await t.store.clients.setDisabled(rs.clientId, true);
  const { res, body } = await introspect(t, rs, sync.tokens.access_token);
  assert.equal(res.status, 401);
  assert.deepEqual(Object.keys(body).sort(), ["error", "error_description"]);
  assert.equal(body.error, "invalid_client");
});

const GRANTS: { name: string; body: (rs: SeededClient, t: TestApp) => Promise<Record<string, string>> }[] = [
  {
    name: "client_credentials",
    body: async (rs) => ({ grant_type: "client_credentials", client_id: rs.clientId, client_secret: rs.clientSecret }),
  },
  {
    // A code for it cannot come from /oauth/authorize; one written into the store directly is still refused.
    name: "authorization_code",
    body: async (rs, t) => codeBody(rs, await issueCode(t, rs, { redirectUri: "https://client.example/cb" })),
  },
  {
    name: "refresh_token (another client's)",
    body: async (rs, t) => refreshBody(rs, (await authCodeTokens(t)).tokens.refresh_token),
  },
];

for (const row of GRANTS) {
  test(`a resource server obtains no token through ${row.name}: 400 unauthorized_client`, async () => {
    const t = await openTestApp();
    const rs = await t.seed.client({ grant: null });
    const res = await t.app.fetch(postJson("/oauth/token", await row.body(rs, t)));
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const body = await res.json();
    assert.equal(body.error, "unauthorized_client");
    assert.equal(body.access_token, undefined);
  });
}

test("a resource server at /oauth/authorize gets the HTML error page, never a redirect", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const query = new URLSearchParams({
    response_type: "code",
    client_id: rs.clientId,
    redirect_uri: "https://client.example/cb",
    scope: "fields:read",
    state: "s",
  });
  const res = await t.app.fetch(new Request(`http://fieldgate.test/oauth/authorize?${query}`));
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(await res.text(), /not allowed to ask users for access/);
});

test("a resource server cannot revoke another client's token (RFC 7009 §2.1), which stays active", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { sync } = await threeClientsTokens(t);
  const res = await t.app.fetch(postJson("/oauth/revoke", {
    token: sync.tokens.access_token,
    client_id: rs.clientId,
    client_secret: rs.clientSecret,
  }));
  assert.equal(res.status, 403);
  assert.equal((await res.json()).error, "unauthorized_client");
  assert.equal((await introspect(t, rs, sync.tokens.access_token)).body.active, true);
});

type Check = (request: Request) => Promise<{ sub: string } | undefined>;
type MakeCheck = (options: { issuer: string; clientId: string; clientSecret: string; scope: string; fetch: typeof fetch }) => Check;

/** The `resource-server-check` block of docs/oauth.md, as a module. */
async function documentedCheck(): Promise<MakeCheck> {
  const doc = readFileSync(new URL("../../docs/oauth.md", import.meta.url), "utf8");
  const source = /```ts resource-server-check\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(source, "docs/oauth.md has a ts resource-server-check block");
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-rs-"));
  try {
    writeFileSync(join(dir, "check.ts"), source);
    return (await import(pathToFileURL(join(dir, "check.ts")).href)).fieldgateCheck as MakeCheck;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the validator docs/oauth.md shows admits a live token and refuses a revoked one, a refresh token and a wrong scope", async () => {
  const t = await openTestApp();
  const rs = await t.seed.client({ grant: null });
  const { web, sync } = await threeClientsTokens(t);
  const fieldgateCheck = await documentedCheck();
  const options = { issuer: "http://fieldgate.test", clientId: rs.clientId, clientSecret: rs.clientSecret };
  const sendTo = (input: RequestInfo | URL, init?: RequestInit) => t.app.fetch(new Request(input, init));
  const check = fieldgateCheck({ ...options, scope: "fields:read", fetch: sendTo as typeof fetch });
  const call = (authorization?: string) =>
    check(new Request("http://orders.test/", { headers: authorization ? { authorization } : {} }));
  assert.equal((await call(`Bearer ${web.tokens.access_token}`))?.sub, `user:${web.issued.userId}`);
  assert.equal(await call(`Bearer ${web.tokens.refresh_token}`), undefined);
  assert.equal(await call(), undefined);
  const narrow = fieldgateCheck({ ...options, scope: "fields:write", fetch: sendTo as typeof fetch });
  assert.equal(await narrow(new Request("http://orders.test/", { headers: { authorization: `Bearer ${sync.tokens.access_token}` } })), undefined);
  await t.app.fetch(postJson("/oauth/revoke", { token: web.tokens.access_token, client_id: web.client.clientId, client_secret: web.client.clientSecret }));
  assert.equal(await call(`Bearer ${web.tokens.access_token}`), undefined);
  const wrong = fieldgateCheck({ ...options, clientSecret: "wrong", scope: "fields:read", fetch: sendTo as typeof fetch });
  await assert.rejects(wrong(new Request("http://orders.test/", { headers: { authorization: `Bearer ${sync.tokens.access_token}` } })), /answered 401/);
});

test("a resource server's failed authentications are throttled like every client's: 429 once at the limit", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const rs = await t.seed.client({ grant: null });
  const { sync } = await threeClientsTokens(t);
  const from = { remoteAddress: "203.0.113.7" };
  const ask = (secret: string) =>
    t.app.fetch(postJson("/oauth/introspect", { token: sync.tokens.access_token, client_id: rs.clientId, client_secret: secret }), from);
  for (let i = 0; i < 3; i++) assert.equal((await ask("wrong")).status, 401);
  const refused = await ask(rs.clientSecret);
  assert.equal(refused.status, 429);
  assert.ok(refused.headers.get("retry-after"));
  assert.equal((await refused.json()).active, undefined);
});
