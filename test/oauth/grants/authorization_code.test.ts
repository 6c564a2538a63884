import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../../helpers/test_app.ts";
import { postJson } from "../../helpers/requests.ts";
import {
  ccCreds,
  codeBody,
  type ErrorRow,
  issueCode,
  makeVerifier,
  testErrorRows,
  tokenInfo,
} from "../../helpers/codes.ts";

async function exchange(t: TestApp, body: Record<string, string>) {
  const res = await t.app.fetch(postJson("/oauth/token", body));
  return { res, body: await res.json() };
}

test("authorization_code issues tokens acting as the approving user with the code's scope", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  const issued = await issueCode(t, client, { userId: user.id });
  const { res, body } = await exchange(t, codeBody(client, issued));
  assert.equal(res.status, 200);
  const info = await (await tokenInfo(t, body.access_token)).json();
  assert.equal(info.resource_owner_id, user.id);
  assert.deepEqual(info.scope, ["fields:read"]);
});

test("authorization_code writes one token_issued audit row with the tokens, and none for a refused exchange", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  const verifier = makeVerifier();
  const refusedCode = await issueCode(t, client, { userId: user.id, verifier });
  const refused = await exchange(t, codeBody(client, refusedCode, { code_verifier: makeVerifier() }));
  assert.equal(refused.res.status, 400);
  const issuedRows = async () => (await t.store.audit.list({})).filter((e) => e.event === "token_issued");
  assert.equal((await issuedRows()).length, 0);
  const issued = await issueCode(t, client, { userId: user.id });
  const { res } = await exchange(t, codeBody(client, issued));
  assert.equal(res.status, 200);
  const rows = await issuedRows();
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.clientId, client.clientId);
  assert.equal(rows[0]!.userId, user.id);
  assert.deepEqual(rows[0]!.detail, { grant_type: "authorization_code", scope: "fields:read" });
  assert.equal(t.log.filter((l) => l.event === "audit.token_issued").length, 1);
});

test("authorization_code checks the S256 code_verifier through the app's injected digest", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const verifier = makeVerifier();
  const issued = await issueCode(t, client, { verifier });
  const digest = t.app.deps.digest;
  const digested: string[] = [];
  t.app.deps.digest = (value) => (digested.push(value), digest(value));
  const { res } = await exchange(t, codeBody(client, issued, { code_verifier: verifier }));
  assert.equal(res.status, 200);
  assert.ok(digested.includes(verifier), "the verifier went through deps.digest, the path PBKDF2 cannot hold up");
});

test("authorization_code accepts the right S256 code_verifier", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const verifier = makeVerifier();
  const issued = await issueCode(t, client, { verifier });
  const { res } = await exchange(t, codeBody(client, issued, { code_verifier: verifier }));
  assert.equal(res.status, 200);
});

const PKCE_ROWS = [
  { name: "a missing code_verifier", verifier: undefined },
  { name: "a wrong code_verifier", verifier: "b".repeat(43) },
];

for (const row of PKCE_ROWS) {
  test(`authorization_code refuses ${row.name} for a PKCE code and burns the code`, async () => {
    const t = await openTestApp();
    const client = await t.seed.client();
    const verifier = makeVerifier();
    const issued = await issueCode(t, client, { verifier });
    const extra: Record<string, string> = row.verifier === undefined ? {} : { code_verifier: row.verifier };
    const { res, body } = await exchange(t, codeBody(client, issued, extra));
    assert.equal(res.status, 400);
    assert.equal(body.error, "invalid_grant");
    // The failed attempt consumed the code: the right verifier now meets a used code.
    const retry = await exchange(t, codeBody(client, issued, { code_verifier: verifier }));
    assert.equal(retry.body.error, "invalid_grant");
  });
}

// RFC 9700 §2.1.1: a verifier for a code issued without a challenge is refused, or an attacker who stripped the
// challenge from the authorization request could still pass the exchange off as a PKCE one.
test("authorization_code refuses a code_verifier for a code issued without a code_challenge, and burns the code", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const { res, body } = await exchange(t, codeBody(client, issued, { code_verifier: makeVerifier() }));
  assert.equal(res.status, 400);
  assert.equal(body.error, "invalid_grant");
  assert.equal((await exchange(t, codeBody(client, issued))).body.error, "invalid_grant", "the code is used up");
});

// RFC 6749 §4.1.3: redirect_uri must be identical to the one the code was issued for, not merely share a prefix.
const REDIRECT_PREFIXES = [
  { name: "extends", redirectUri: "https://client.example/cb/other" },
  { name: "is a prefix of", redirectUri: "https://client.example/c" },
  { name: "adds a query to", redirectUri: "https://client.example/cb?x=1" },
];

for (const row of REDIRECT_PREFIXES) {
  test(`authorization_code refuses a redirect_uri that ${row.name} the code's, and burns the code`, async () => {
    const t = await openTestApp();
    const client = await t.seed.client();
    const issued = await issueCode(t, client);
    const { res, body } = await exchange(t, codeBody(client, issued, { redirect_uri: row.redirectUri }));
    assert.equal(res.status, 400);
    assert.equal(body.error, "invalid_grant");
    assert.equal((await exchange(t, codeBody(client, issued))).body.error, "invalid_grant", "the code is used up");
  });
}

test("authorization_code: a code is valid one second before its expiry and invalid at it", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const early = await issueCode(t, client);
  const late = await issueCode(t, client);
  t.clock.advance(t.config.codeTtlSeconds - 1);
  assert.equal((await exchange(t, codeBody(client, early))).res.status, 200);
  t.clock.advance(1);
  const { res, body } = await exchange(t, codeBody(client, late));
  assert.equal(res.status, 400);
  assert.equal(body.error, "invalid_grant");
});

test("authorization_code honours a configured code lifetime", async () => {
  const t = await openTestApp({ FIELDGATE_CODE_TTL: "600" });
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  t.clock.advance(599);
  assert.equal((await exchange(t, codeBody(client, issued))).res.status, 200);
});

test("authorization_code: a replayed code is invalid_grant and revokes every token issued from it", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const first = await exchange(t, codeBody(client, issued));
  assert.equal(first.res.status, 200);
  assert.equal((await tokenInfo(t, first.body.access_token)).status, 200);
  const replay = await exchange(t, codeBody(client, issued));
  assert.equal(replay.res.status, 400);
  assert.equal(replay.body.error, "invalid_grant");
  assert.equal((await tokenInfo(t, first.body.access_token)).status, 401);
  const refresh = await t.app.fetch(postJson("/oauth/token", {
    grant_type: "refresh_token",
    client_id: client.clientId,
    client_secret: client.clientSecret,
    refresh_token: first.body.refresh_token,
  }));
  assert.equal((await refresh.json()).error, "invalid_grant");
  const events = await t.store.audit.list({});
  assert.ok(events.some((e) => e.event === "code_reuse_detected" && e.clientId === client.clientId));
});

test("authorization_code: a replay leaves other approvals of the same user alone", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  const a = await issueCode(t, client, { userId: user.id });
  const b = await issueCode(t, client, { userId: user.id });
  const tokensB = (await exchange(t, codeBody(client, b))).body;
  await exchange(t, codeBody(client, a));
  await exchange(t, codeBody(client, a));
  assert.equal((await tokenInfo(t, tokensB.access_token)).status, 200);
});

// RFC 6749 §4.1.3: the code must have been issued to the authenticated client. Another registered client that
// got hold of the code (a leaked redirect, a log) must not be able to spend it, revoke the grant behind it, or
// learn whether it was already exchanged.
test("authorization_code: another client presenting a code neither burns it nor learns whether it was used", async () => {
  const t = await openTestApp();
  const owner = await t.seed.client();
  const other = await t.seed.client();
  const issued = await issueCode(t, owner);
  const early = await exchange(t, codeBody(other, issued));
  assert.equal(early.res.status, 400);
  assert.equal(early.body.error, "invalid_grant");
  const own = await exchange(t, codeBody(owner, issued));
  assert.equal(own.res.status, 200, "the owner's exchange still succeeds");
  const late = await exchange(t, codeBody(other, issued));
  assert.deepEqual(late.body, early.body, "used or not, the other client gets the same answer");
  assert.equal(late.res.status, 400);
  assert.equal((await tokenInfo(t, own.body.access_token)).status, 200, "the owner's grant is not revoked");
  const events = (await t.store.audit.list({})).map((e) => e.event);
  assert.ok(!events.includes("code_reuse_detected"));
});

test("authorization_code: two concurrent exchanges of one code give exactly one 200", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const results = await Promise.all(
    [1, 2].map(() => t.app.fetch(postJson("/oauth/token", codeBody(client, issued)))),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 400]);
  // The loser replayed the code, so the winner's tokens are revoked too (RFC 6749 §4.1.2 SHOULD).
  const winner = await results.find((r) => r.status === 200)!.json();
  assert.equal((await tokenInfo(t, winner.access_token)).status, 401);
});

test("authorization_code: a code of a since-disabled user is invalid_grant", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  const issued = await issueCode(t, client, { userId: user.id });
  await t.store.users.setDisabled(user.id, true);
  const { res, body } = await exchange(t, codeBody(client, issued));
  assert.equal(res.status, 400);
  assert.equal(body.error, "invalid_grant");
});

test("authorization_code: a family revoked between consume and issue yields invalid_grant", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  // Simulate a racing replay: the user revokes access (the family) after the code was issued.
  await t.store.tokens.revokeUserClient(issued.userId, client.client.id, t.clock.nowSeconds());
  const { res, body } = await exchange(t, codeBody(client, issued));
  assert.equal(res.status, 400);
  assert.equal(body.error, "invalid_grant");
});

const ERROR_ROWS: ErrorRow[] = [
  {
    name: "code: missing code",
    request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), code: "" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "code: missing redirect_uri",
    request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), redirect_uri: "" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "code: unknown code",
    request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), code: "fgac_unknown" }),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "code: wrong redirect_uri",
    request: (f) =>
      postJson("/oauth/token", codeBody(f.ac, f.code, { redirect_uri: "https://client.example/cb/other" })),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "code: issued to another client",
    request: (f) => postJson("/oauth/token", codeBody(f.other, f.code)),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "code: malformed code_verifier",
    request: (f) => postJson("/oauth/token", codeBody(f.ac, f.code, { code_verifier: "short" })),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "code: verifier without challenge (downgrade)",
    request: (f) => postJson("/oauth/token", codeBody(f.ac, f.code, { code_verifier: "a".repeat(43) })),
    status: 400,
    error: "invalid_grant",
  },
  {
    name: "code: client-credentials client",
    request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), ...ccCreds(f) }),
    status: 400,
    error: "unauthorized_client",
  },
];

testErrorRows(ERROR_ROWS);
