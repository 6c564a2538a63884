// A revocation that commits while a request is in flight (between its checks and its write) must stop what the
// request writes: the admin commands and /account/revoke only reach rows that exist when they commit. Each test
// runs the revocation exactly there, by wrapping the store call the request writes through, as the admin CLI (another
// process) or another request would from outside (store/sqlite/still_authorized.ts).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { openTestApp, testBackend, type TestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { authCodeTokens, ccRequest, codeBody, issueCode, refreshBody } from "../helpers/codes.ts";
import { authorizePath, formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

/** Runs `meanwhile` just before every call of `object[method]`, then the call itself. */
function before<T extends object, K extends keyof T>(object: T, method: K, meanwhile: () => Promise<unknown>): void {
  const original = (object[method] as (...args: unknown[]) => Promise<unknown>).bind(object);
  (object as Record<K, unknown>)[method] = async (...args: unknown[]) => {
    await meanwhile();
    return original(...args);
  };
}

const issuedRows = async (t: TestApp) => (await t.store.audit.list({})).filter((e) => e.event === "token_issued").length;

test("client_credentials: a secret rotated with --revoke-tokens mid-request leaves no live token (401)", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  before(t.store.tokens, "issue", () =>
    t.store.clients.rotateSecret(client.clientId, { secretHash: "f".repeat(64), now: t.clock.nowSeconds(), revokeTokens: true }));
  const res = await t.app.fetch(ccRequest(client));
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_client");
  assert.equal(res.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
  assert.equal(await t.store.tokens.count(), 0);
  assert.equal(await issuedRows(t), 0);
  assert.equal(t.log.some((l) => l.event === "audit.token_issued"), false);
});

test("client_credentials: a rotation without --revoke-tokens mid-request still refuses the old secret", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  before(t.store.tokens, "issue", () =>
    t.store.clients.rotateSecret(client.clientId, { secretHash: "f".repeat(64), now: t.clock.nowSeconds(), revokeTokens: false }));
  assert.equal((await t.app.fetch(ccRequest(client))).status, 401);
  assert.equal(await t.store.tokens.count(), 0);
});

test("client_credentials: disabling the client or its integration user mid-request issues nothing, and enabling brings nothing back", async () => {
  for (const disable of ["client", "user"] as const) {
    const t = await openTestApp();
    const client = await t.seed.client({ grant: "client_credentials" });
    const userId = client.client.integrationUserId!;
    before(t.store.tokens, "issue", () =>
      disable === "client"
        ? t.store.clients.setDisabled(client.clientId, true)
        : t.store.users.setDisabled(userId, true, { revokeTokensAt: t.clock.nowSeconds() }));
    const res = await t.app.fetch(ccRequest(client));
    assert.deepEqual([res.status, (await res.json()).error], disable === "client" ? [401, "invalid_client"] : [400, "invalid_grant"], disable);
    if (disable === "client") await t.store.clients.setDisabled(client.clientId, false);
    else await t.store.users.setDisabled(userId, false);
    assert.equal(await t.store.tokens.count(), 0, disable);
  }
});

test("refresh: a secret rotated mid-request rotates nothing (401); the new secret then refreshes", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  const newSecret = "fgcs_new-secret-for-this-test";
  let once = true;
  before(t.store.tokens, "rotateRefresh", async () => {
    if (!once) return;
    once = false;
    await t.store.clients.rotateSecret(client.clientId, { secretHash: await sha256Hex(newSecret), now: t.clock.nowSeconds(), revokeTokens: false });
  });
  const refused = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal(refused.status, 401);
  assert.equal((await refused.json()).error, "invalid_client");
  const presented = await t.store.tokens.findByHash(await tokenKey(t.app.deps, tokens.refresh_token));
  assert.equal(presented?.rotatedAt, null, "the presented refresh token is untouched");
  const again = await t.app.fetch(postJson("/oauth/token", refreshBody({ ...client, clientSecret: newSecret }, tokens.refresh_token)));
  assert.equal(again.status, 200);
});

test("refresh: disabling the user mid-request answers invalid_grant and rotates nothing", async () => {
  const t = await openTestApp();
  const { client, tokens, issued } = await authCodeTokens(t);
  before(t.store.tokens, "rotateRefresh", () => t.store.users.setDisabled(issued.userId, true));
  const res = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error, "invalid_grant");
  const presented = await t.store.tokens.findByHash(await tokenKey(t.app.deps, tokens.refresh_token));
  assert.equal(presented?.rotatedAt, null);
  assert.equal(await t.store.tokens.count(), 2, "only the first pair");
});

test("code exchange: a secret rotated mid-request issues nothing (401)", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  before(t.store.tokens, "exchangeCode", () =>
    t.store.clients.rotateSecret(client.clientId, { secretHash: "f".repeat(64), now: t.clock.nowSeconds(), revokeTokens: false }));
  const res = await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)));
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_client");
  assert.equal(await t.store.tokens.count(), 0);
});

/** Counts the codes the store actually stored (issue resolved true); install before `before`. */
function storedCodes(t: TestApp): () => number {
  let stored = 0;
  const issue = t.store.codes.issue.bind(t.store.codes);
  t.store.codes.issue = async (code, basis) => {
    const ok = await issue(code, basis);
    if (ok) stored++;
    return ok;
  };
  return () => stored;
}

/** A browser signed in as a fresh user, and the authorization request of a fresh client. */
async function signedIn() {
  const t = await openTestApp();
  const client = await t.seed.client();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  assert.equal((await signIn(browser, user)).status, 303);
  const path = authorizePath(client.clientId);
  const consentForm = async () => formFields(await (await browser.get(path)).text(), "/oauth/authorize");
  return { t, client, user, browser, path, consentForm };
}

/** A signed-in browser whose approval of the client is remembered, so GET /oauth/authorize mints a code at once. */
async function rememberedApproval() {
  const { t, client, user, browser, path } = await signedIn();
  await t.store.consents.grant(user.id, client.client.id, { scope: "fields:read", now: t.clock.nowSeconds() });
  const stored = storedCodes(t);
  assert.equal((await browser.get(path)).status, 302, "remembered: straight back with a code");
  assert.equal(stored(), 1);
  return { t, client, user, browser, path, stored };
}

test("authorize: a password change (sessions ended) mid-request mints no code; the browser is asked to sign in", async () => {
  const { t, user, browser, path, stored } = await rememberedApproval();
  before(t.store.codes, "issue", () => t.store.users.replacePassword(user.id, "x", { revokeTokensAt: t.clock.nowSeconds() }));
  const res = await browser.get(path);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("location"), null);
  assert.match(await res.text(), /<h1>Sign in<\/h1>/);
  assert.equal(stored(), 1, "no second code");
});

test("authorize: access withdrawn at /account mid-request mints no code; the consent page asks again", async () => {
  const { t, client, user, browser, path, stored } = await rememberedApproval();
  before(t.store.codes, "issue", () => t.store.tokens.revokeUserClient(user.id, client.client.id, t.clock.nowSeconds()));
  const res = await browser.get(path);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("location"), null);
  assert.match(await res.text(), /name="decision" value="approve"/);
  assert.equal(stored(), 1, "no second code");
  assert.equal(await t.store.consents.find(user.id, client.client.id), undefined);
});

test("approve: a user disabled (session ended) mid-request mints no code and stores no consent; sign in again (403)", async () => {
  const { t, client, user, browser, consentForm } = await signedIn();
  const form = await consentForm();
  const stored = storedCodes(t);
  before(t.store.codes, "issue", () => t.store.users.setDisabled(user.id, true));
  const res = await browser.post("/oauth/authorize", { ...form, decision: "approve" });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get("location"), null);
  assert.match(await res.text(), /<h1>Sign in<\/h1>/);
  assert.equal(stored(), 0);
  assert.equal(await t.store.consents.find(user.id, client.client.id), undefined);
});

// SQLite hands a deleted row's id to the next client, which is the case this guards; a PostgreSQL identity column
// never does, and the test checks that premise on each backend before the outcome, which is the same on both.
test("approve: a client deleted mid-request, and a new one registered meanwhile (on SQLite with its row id), gets neither the code nor the consent", async () => {
  const { t, client, user, browser, consentForm } = await signedIn();
  const form = await consentForm();
  const stored = storedCodes(t);
  let newcomer: Awaited<ReturnType<typeof t.seed.client>> | undefined;
  before(t.store.codes, "issue", async () => {
    await t.store.clients.remove(client.clientId, t.clock.nowSeconds());
    newcomer = await t.seed.client({ name: "Another application", redirectUri: "https://other.example/cb" });
  });
  const res = await browser.post("/oauth/authorize", { ...form, decision: "approve" });
  const handedOn = newcomer!.client.id === client.client.id;
  assert.equal(handedOn, testBackend() === "sqlite", "the premise: SQLite hands the row id on, PostgreSQL never does");
  assert.equal(res.headers.get("location"), null);
  assert.equal(stored(), 0);
  assert.equal(await t.store.consents.find(user.id, newcomer!.client.id), undefined, "no consent the user never gave");
  const next = await browser.get(authorizePath(newcomer!.clientId, { redirect_uri: "https://other.example/cb" }));
  assert.equal(next.status, 200, "the new application gets the consent page, not a code");
});

test("approve stores the consent with the code: the next request is remembered", async () => {
  const { t, client, user, browser, path, consentForm } = await signedIn();
  const form = await consentForm();
  assert.equal((await browser.post("/oauth/authorize", { ...form, decision: "approve" })).status, 303);
  assert.equal((await t.store.consents.find(user.id, client.client.id))?.scope, "fields:read");
  assert.equal((await browser.get(path)).status, 302);
});

test("authorize: this browser signed out mid-request mints no code, though another session of the user lives", async () => {
  const { t, user, browser, path, stored } = await rememberedApproval();
  const other = testBrowser(t.app);
  assert.equal((await signIn(other, user)).status, 303);
  before(t.store.codes, "issue", async () => {
    for (const cookie of browser.cookies.values()) await t.store.sessions.delete(await t.app.deps.digest(cookie));
  });
  const res = await browser.get(path);
  assert.equal(res.headers.get("location"), null);
  assert.equal(stored(), 1, "no second code");
});

test("authorize: a client disabled mid-request gets no code", async () => {
  const { t, client, browser, path, stored } = await rememberedApproval();
  before(t.store.codes, "issue", () => t.store.clients.setDisabled(client.clientId, true));
  assert.equal((await browser.get(path)).headers.get("location"), null);
  assert.equal(stored(), 1, "no second code");
});

test("authorize: a remembered approval replaced by another scope mid-request mints no code for the old one", async () => {
  const { t, client, user, browser, path, stored } = await rememberedApproval();
  before(t.store.codes, "issue", () => t.store.consents.grant(user.id, client.client.id, { scope: "other:scope", now: t.clock.nowSeconds() }));
  assert.equal((await browser.get(path)).headers.get("location"), null);
  assert.equal(stored(), 1, "no second code");
});

test("authorize: a session that expires just before the code is written mints no code (the same bound as sign-in)", async () => {
  const { t, browser, path, stored } = await rememberedApproval();
  t.clock.advance(t.config.sessionTtlSeconds - 1);
  before(t.store.consents, "find", async () => t.clock.advance(1));
  assert.equal((await browser.get(path)).headers.get("location"), null);
  assert.equal(stored(), 1, "no second code");
});

test("approve stores the consent at the decision's time; a remembered authorization leaves that time alone", async () => {
  const { t, client, user, browser, path, consentForm } = await signedIn();
  const form = await consentForm();
  const decided = t.clock.nowSeconds();
  assert.equal((await browser.post("/oauth/authorize", { ...form, decision: "approve" })).status, 303);
  assert.equal((await t.store.consents.find(user.id, client.client.id))?.grantedAt, decided);
  t.clock.advance(100);
  assert.equal((await browser.get(path)).status, 302);
  assert.equal((await t.store.consents.find(user.id, client.client.id))?.grantedAt, decided, "/account shows when it was granted");
});

test("refresh: a replayed token revokes its family even while the user is disabled mid-request", async () => {
  const t = await openTestApp();
  const { client, tokens, issued } = await authCodeTokens(t);
  const first = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal(first.status, 200);
  const child = (await first.json()).refresh_token as string;
  let once = true;
  before(t.store.tokens, "rotateRefresh", async () => {
    if (once) await t.store.users.setDisabled(issued.userId, true);
    once = false;
  });
  assert.equal((await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)))).status, 400);
  await t.store.users.setDisabled(issued.userId, false);
  // Re-enabling the user must not bring the stolen family back.
  assert.notEqual((await t.store.tokens.findByHash(await tokenKey(t.app.deps, child)))?.revokedAt, null);
  assert.equal((await t.app.fetch(postJson("/oauth/token", refreshBody(client, child)))).status, 400);
});
