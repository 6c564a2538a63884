import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../../helpers/test_app.ts";
import { basicAuth, postForm, postJson } from "../../helpers/requests.ts";
import {
  authCodeTokens,
  ccCreds,
  codeBody,
  issueCode,
  type ErrorRow,
  refreshBody,
  testErrorRows,
  tokenFixture,
  tokenInfo,
} from "../../helpers/codes.ts";
import type { SeededClient } from "../../helpers/test_app.ts";
import { tokenKey } from "../../../src/oauth/token_keys.ts";

async function refresh(t: TestApp, client: SeededClient, token: string, extra: Record<string, string> = {}) {
  const res = await t.app.fetch(postJson("/oauth/token", refreshBody(client, token, extra)));
  return { res, body: await res.json() };
}

test("refresh rotates: a new access and refresh token, the old refresh token stops working", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  t.clock.advance(100);
  const { res, body } = await refresh(t, client, tokens.refresh_token);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(body.expires_in, 28_800);
  assert.equal(body.token_type, "Bearer");
  assert.equal(body.scope, "fields:read");
  assert.equal(body.created_at, t.clock.nowSeconds());
  assert.notEqual(body.access_token, tokens.access_token);
  assert.notEqual(body.refresh_token, tokens.refresh_token);
  assert.equal((await tokenInfo(t, body.access_token)).status, 200);
  // The previous access token keeps its own lifetime (RFC 6749 §6 leaves it to the server).
  assert.equal((await tokenInfo(t, tokens.access_token)).status, 200);
  const refreshed = (await t.store.audit.list({})).filter((e) => e.event === "token_refreshed");
  // One row, written in the rotation's transaction, naming the client, the user and the grant's scope.
  assert.equal(refreshed.length, 1);
  assert.equal(refreshed[0]!.clientId, client.clientId);
  assert.equal(refreshed[0]!.userId, (await t.store.tokens.findByHash(await tokenKey(t.app.deps, body.access_token)))!.userId);
  assert.deepEqual(refreshed[0]!.detail, { scope: "fields:read", grace_retry: false });
});

test("refresh works without redirect_uri, as standard libraries send it (form body, Basic)", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const res = await t.app.fetch(
    postForm("/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, {
      authorization: basicAuth(client.clientId, client.clientSecret),
    }),
  );
  assert.equal(res.status, 200);
});

test("refresh requires redirect_uri when the operator switches it on", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_REQUIRE_REDIRECT_URI: "true" });
  const { client, tokens } = await authCodeTokens(t);
  const { redirect_uri: _r, ...body } = refreshBody(client, tokens.refresh_token);
  const res = await t.app.fetch(postJson("/oauth/token", body));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error, "invalid_request");
  assert.equal((await refresh(t, client, tokens.refresh_token)).res.status, 200);
});

test("refresh: the new access token lives 28800 s: valid one second before, invalid at expiry", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const { body } = await refresh(t, client, tokens.refresh_token);
  t.clock.advance(28_799);
  const before = await tokenInfo(t, body.access_token);
  assert.equal(before.status, 200);
  assert.equal((await before.json()).expires_in, 1);
  t.clock.advance(1);
  const at = await tokenInfo(t, body.access_token);
  assert.equal(at.status, 401);
  assert.match(at.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
});

test("refresh works after the access token expired, and fails once the refresh token expired", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_TTL: "86400" });
  const { client, tokens } = await authCodeTokens(t);
  t.clock.advance(28_800);
  const { res, body } = await refresh(t, client, tokens.refresh_token);
  assert.equal(res.status, 200);
  t.clock.advance(86_400);
  const late = await refresh(t, client, body.refresh_token);
  assert.equal(late.res.status, 400);
  assert.equal(late.body.error, "invalid_grant");
});

test("refresh: reusing a rotated refresh token revokes the whole family", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const second = (await refresh(t, client, tokens.refresh_token)).body;
  t.clock.advance(1);
  const reuse = await refresh(t, client, tokens.refresh_token);
  assert.equal(reuse.res.status, 400);
  assert.equal(reuse.body.error, "invalid_grant");
  for (const access of [tokens.access_token, second.access_token]) {
    assert.equal((await tokenInfo(t, access)).status, 401);
  }
  assert.equal((await refresh(t, client, second.refresh_token)).body.error, "invalid_grant");
  const events = await t.store.audit.list({});
  assert.ok(events.some((e) => e.event === "refresh_reuse_detected" && e.clientId === client.clientId));
});

test("refresh: reuse revokes only its own family, not the user's other approvals of the same client", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  // Two approvals by one user for one client (two devices, say): two grant families.
  const pairOf = async () => {
    const res = await t.app.fetch(postJson("/oauth/token", codeBody(client, await issueCode(t, client, { userId: user.id }))));
    assert.equal(res.status, 200);
    return (await res.json()) as { access_token: string; refresh_token: string };
  };
  const a = await pairOf();
  const b = await pairOf();
  assert.equal((await refresh(t, client, a.refresh_token)).res.status, 200);
  const reuse = await refresh(t, client, a.refresh_token);
  assert.equal(reuse.body.error, "invalid_grant");
  assert.equal((await tokenInfo(t, a.access_token)).status, 401, "the reused family is revoked");
  assert.equal((await tokenInfo(t, b.access_token)).status, 200);
  assert.equal((await refresh(t, client, b.refresh_token)).res.status, 200);
});

/** Reuse was detected once, and it revoked the grant: `pair` (issued before the reuse) is dead. */
async function assertReuseRevoked(t: TestApp, client: SeededClient, pair: { access_token: string; refresh_token: string }) {
  assert.equal((await tokenInfo(t, pair.access_token)).status, 401);
  assert.equal((await refresh(t, client, pair.refresh_token)).res.status, 400);
  const detected = (await t.store.audit.list({})).filter((e) => e.event === "refresh_reuse_detected");
  assert.equal(detected.length, 1);
}

test("refresh: within the grace period a retry gets a fresh pair and the lost pair dies", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "5" });
  const { client, tokens } = await authCodeTokens(t);
  const lost = (await refresh(t, client, tokens.refresh_token)).body;
  t.clock.advance(5);
  const retry = await refresh(t, client, tokens.refresh_token);
  assert.equal(retry.res.status, 200);
  assert.equal((await tokenInfo(t, lost.access_token)).status, 401);
  assert.equal((await tokenInfo(t, retry.body.access_token)).status, 200);
  assert.equal((await refresh(t, client, retry.body.refresh_token)).res.status, 200);
  const retries = (await t.store.audit.list({})).filter((e) => e.event === "token_refreshed").map((e) => e.detail?.grace_retry);
  assert.deepEqual(retries.sort(), [false, false, true]);
  assert.ok(!(await t.store.audit.list({})).some((e) => e.event === "refresh_reuse_detected"));
});

// RFC 9700 §4.14.2. The retry assumed the first response was lost; someone presenting that response's refresh token
// proves otherwise, so one of the two parties is not the client: the whole grant goes, the retrier's pair with it.
test("refresh: the pair a grace retry replaced, presented later, is reuse and revokes the retry's pair too", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "30" });
  const { client, tokens } = await authCodeTokens(t);
  const received = (await refresh(t, client, tokens.refresh_token)).body;
  const retry = await refresh(t, client, tokens.refresh_token);
  assert.equal(retry.res.status, 200);
  const replaced = await refresh(t, client, received.refresh_token);
  assert.equal(replaced.res.status, 400);
  assert.equal(replaced.body.error, "invalid_grant");
  await assertReuseRevoked(t, client, retry.body);
});

test("refresh: once the grant is revoked, the pair a grace retry replaced is invalid, not reported as reuse", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "30" });
  const { client, tokens } = await authCodeTokens(t);
  const received = (await refresh(t, client, tokens.refresh_token)).body;
  const retry = (await refresh(t, client, tokens.refresh_token)).body;
  const revoked = await t.app.fetch(postJson("/oauth/revoke", {
    token: retry.refresh_token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  }));
  assert.equal(revoked.status, 200);
  const after = await refresh(t, client, received.refresh_token);
  assert.equal(after.body.error, "invalid_grant");
  assert.ok(!(await t.store.audit.list({})).some((e) => e.event === "refresh_reuse_detected"));
});

test("refresh: a refused rotation (wider scope) writes neither tokens nor an audit row", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const before = (await t.store.audit.list({})).length;
  const tokensBefore = await t.store.tokens.count();
  const { res } = await refresh(t, client, tokens.refresh_token, { scope: "fields:read fields:write" });
  assert.equal(res.status, 400);
  assert.equal(await t.store.tokens.count(), tokensBefore);
  assert.equal((await t.store.audit.list({})).filter((e) => e.event === "token_refreshed").length, 0);
  assert.equal((await t.store.audit.list({})).length, before);
  // The presented token was not spent: it still rotates.
  assert.equal((await refresh(t, client, tokens.refresh_token)).res.status, 200);
});

test("refresh: after the grace period a retry is reuse and revokes the family", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "5" });
  const { client, tokens } = await authCodeTokens(t);
  const second = (await refresh(t, client, tokens.refresh_token)).body;
  t.clock.advance(6);
  const late = await refresh(t, client, tokens.refresh_token);
  assert.equal(late.body.error, "invalid_grant");
  assert.equal((await tokenInfo(t, second.access_token)).status, 401);
});

test("refresh: within the grace period, a token whose successor was already used is reuse", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "30" });
  const { client, tokens } = await authCodeTokens(t);
  const second = (await refresh(t, client, tokens.refresh_token)).body;
  const third = (await refresh(t, client, second.refresh_token)).body;
  const replay = await refresh(t, client, tokens.refresh_token);
  assert.equal(replay.body.error, "invalid_grant");
  assert.equal((await tokenInfo(t, third.access_token)).status, 401);
});

test("refresh: the grace retry is granted once; a second replay of the same token is reuse and revokes the family", async () => {
  const t = await openTestApp({ FIELDGATE_REFRESH_GRACE: "30" });
  const { client, tokens } = await authCodeTokens(t);
  await refresh(t, client, tokens.refresh_token);
  const retry = await refresh(t, client, tokens.refresh_token);
  assert.equal(retry.res.status, 200);
  // Still inside the window: whoever replays now is not the client that lost one response.
  const again = await refresh(t, client, tokens.refresh_token);
  assert.equal(again.body.error, "invalid_grant");
  await assertReuseRevoked(t, client, retry.body);
});

test("refresh: two concurrent refreshes of one token give exactly one 200 (grace 0)", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const results = await Promise.all(
    [1, 2].map(() => t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)))),
  );
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
});

test("refresh: a narrower scope narrows the access token, the refresh token keeps the original", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t, { scope: "fields:read fields:write" });
  const narrow = await refresh(t, client, tokens.refresh_token, { scope: "fields:read" });
  assert.equal(narrow.res.status, 200);
  assert.equal(narrow.body.scope, "fields:read");
  assert.deepEqual((await (await tokenInfo(t, narrow.body.access_token)).json()).scope, ["fields:read"]);
  const wide = await refresh(t, client, narrow.body.refresh_token);
  assert.equal(wide.body.scope, "fields:read fields:write");
});

test("refresh: a revoked refresh token is invalid_grant without raising the reuse alarm", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  await t.app.fetch(
    postJson("/oauth/revoke", {
      token: tokens.refresh_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }),
  );
  const res = await refresh(t, client, tokens.refresh_token);
  assert.equal(res.body.error, "invalid_grant");
  const events = await t.store.audit.list({});
  assert.ok(!events.some((e) => e.event === "refresh_reuse_detected"));
});

test("refresh: a disabled user's refresh token is invalid_grant", async () => {
  const t = await openTestApp();
  const { client, tokens, issued } = await authCodeTokens(t);
  await t.store.users.setDisabled(issued.userId, true);
  const res = await refresh(t, client, tokens.refresh_token);
  assert.equal(res.res.status, 400);
  assert.equal(res.body.error, "invalid_grant");
  assert.match(res.body.error_description, /disabled/, "its own client is told why");
});

test("refresh: another client learns nothing of a disabled user from a token that is not its own", async () => {
  const t = await openTestApp();
  const { tokens, issued } = await authCodeTokens(t);
  const other = await t.seed.client({ name: "Other app" });
  await t.store.users.setDisabled(issued.userId, true);
  for (const token of [tokens.refresh_token, tokens.access_token]) {
    const res = await refresh(t, other, token);
    assert.equal(res.body.error, "invalid_grant");
    assert.doesNotMatch(res.body.error_description, /disabled/);
  }
  assert.match((await refresh(t, other, "fgrt_unknown")).body.error_description, /invalid, expired or revoked/);
});

const ERROR_ROWS: ErrorRow[] = [
  {
    name: "refresh: client-credentials client",
    request: (f) => postJson("/oauth/token", { ...refreshBody(f.ac, f.pair.refresh_token), ...ccCreds(f) }),
    status: 400,
    error: "unauthorized_client",
  },
  {
    name: "refresh: missing refresh_token",
    request: (f) => postJson("/oauth/token", { ...refreshBody(f.ac, ""), refresh_token: "" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "refresh: unknown refresh_token",
    request: (f) => postJson("/oauth/token", refreshBody(f.ac, "fgrt_unknown")),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "refresh: access token presented as refresh",
    request: (f) => postJson("/oauth/token", refreshBody(f.ac, f.pair.access_token)),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "refresh: wrong redirect_uri",
    request: (f) =>
      postJson(
        "/oauth/token",
        refreshBody(f.ac, f.pair.refresh_token, { redirect_uri: "https://evil.example/cb" }),
      ),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "refresh: another client's token",
    request: (f) =>
      postJson("/oauth/token", {
        ...refreshBody(f.ac, f.pair.refresh_token),
        client_id: f.other.clientId,
        client_secret: f.other.clientSecret,
        redirect_uri: "https://other.example/cb",
      }),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "refresh: wider scope",
    request: (f) =>
      postJson(
        "/oauth/token",
        refreshBody(f.ac, f.pair.refresh_token, { scope: "fields:read fields:write" }),
      ),
    status: 400,
    error: "invalid_scope",
  },
];

testErrorRows(ERROR_ROWS);

test("a failed refresh with a wider scope leaves the refresh token usable", async () => {
  const f = await tokenFixture();
  const wide = await f.t.app.fetch(
    postJson("/oauth/token", refreshBody(f.ac, f.pair.refresh_token, { scope: "fields:write" })),
  );
  assert.equal(wide.status, 400);
  const ok = await f.t.app.fetch(postJson("/oauth/token", refreshBody(f.ac, f.pair.refresh_token)));
  assert.equal(ok.status, 200);
});
