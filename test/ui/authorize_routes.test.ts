import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { sha256Base64Url, sha256Hex } from "../../src/crypto/hash.ts";

const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; // RFC 7636 appendix B

interface Ready {
  t: TestApp;
  browser: TestBrowser;
  clientId: string;
  userId: number;
}

async function signedIn(env: Record<string, string> = {}, client: { redirectUri?: string } = {}): Promise<Ready> {
  const t = await openTestApp(env);
  const { clientId } = await t.seed.client(client);
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const res = await signIn(browser, user);
  assert.equal(res.status, 303);
  return { t, browser, clientId, userId: user.id };
}

/** The seeded client as the token endpoint would have authenticated it. */
async function authenticated(r: Ready) {
  return (await r.t.store.clients.findByClientId(r.clientId))!;
}

/** Counts the codes the store is asked to keep from now on: the URL alone cannot show that none was minted. */
function countCodes(t: TestApp): () => number {
  let issued = 0;
  const issue = t.store.codes.issue.bind(t.store.codes);
  t.store.codes.issue = (code, basis) => {
    issued++;
    return issue(code, basis);
  };
  return () => issued;
}

function assertPageHeaders(res: Response): void {
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("access-control-allow-origin"), null);
}

function location(res: Response): URL {
  const value = res.headers.get("location");
  assert.ok(value, "expected a Location header");
  return new URL(value);
}

async function consentForm(r: Ready, overrides: Record<string, string | undefined> = {}): Promise<Record<string, string>> {
  const res = await r.browser.get(authorizePath(r.clientId, overrides));
  assert.equal(res.status, 200);
  return formFields(await res.text(), "/oauth/authorize");
}

// Client or redirect_uri not trusted: HTML error page, 400, never a redirect (RFC 6749 §4.1.2.1).
const untrusted: Array<{ name: string; params: (clientId: string) => Record<string, string | undefined> }> = [
  { name: "missing client_id", params: () => ({ client_id: undefined }) },
  { name: "unknown client_id", params: () => ({ client_id: "no-such-client" }) },
  { name: "missing redirect_uri", params: () => ({ redirect_uri: undefined }) },
  { name: "redirect_uri on another host", params: () => ({ redirect_uri: "https://evil.example/cb" }) },
  { name: "redirect_uri with a trailing slash", params: () => ({ redirect_uri: "https://client.example/cb/" }) },
  { name: "redirect_uri with an extra query", params: () => ({ redirect_uri: "https://client.example/cb?x=1" }) },
  { name: "redirect_uri differing in case", params: () => ({ redirect_uri: "https://CLIENT.example/cb" }) },
  { name: "redirect_uri over http", params: () => ({ redirect_uri: "http://client.example/cb" }) },
];

for (const row of untrusted) {
  test(`authorize shows a 400 error page and does not redirect for ${row.name}`, async () => {
    const t = await openTestApp();
    const { clientId } = await t.seed.client();
    const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, row.params(clientId))}`));
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("location"), null);
    assertPageHeaders(res);
    assert.match(await res.text(), /Request refused/);
  });
}

test("a missing redirect_uri or scope is explained: the spec requires both, with the registered values", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  const page = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { redirect_uri: undefined })}`));
  assert.match(await page.text(), /Parameter redirect_uri is required: send the callback URI registered for this application/);
  const redirect = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { scope: undefined })}`));
  assert.equal(location(redirect).searchParams.get("error_description"), "Parameter scope is required: send the scope registered for this application");
});

test("authorize accepts response_mode=query, the one mode the metadata lists", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { response_mode: "query" })}`));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /Sign in/);
});

test("authorize refuses a repeated client_id with an error page", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId)}&client_id=${clientId}`));
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
});

for (const kind of ["disabled", "client-credentials-only"] as const) {
  test(`authorize refuses a ${kind} client with an error page`, async () => {
    const t = await openTestApp();
    const seeded = kind === "disabled" ? await t.seed.client() : await t.seed.client({ grant: "client_credentials" });
    if (kind === "disabled") await t.store.clients.setDisabled(seeded.clientId, true);
    const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(seeded.clientId)}`));
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("location"), null);
  });
}

// Client and redirect_uri trusted: errors go back to the client with state and iss (RFC 6749 §4.1.2.1, RFC 9207).
const redirected: Array<{ name: string; params: Record<string, string | undefined>; error: string; env?: Record<string, string> }> = [
  { name: "missing response_type", params: { response_type: undefined }, error: "invalid_request" },
  { name: "response_type=token", params: { response_type: "token" }, error: "unsupported_response_type" },
  { name: "missing scope", params: { scope: undefined }, error: "invalid_scope" },
  { name: "response_mode=fragment (only query is supported)", params: { response_mode: "fragment" }, error: "invalid_request" },
  { name: "response_mode=form_post (only query is supported)", params: { response_mode: "form_post" }, error: "invalid_request" },
  { name: "an unregistered scope", params: { scope: "fields:write" }, error: "invalid_scope" },
  { name: "an extra scope", params: { scope: "fields:read admin" }, error: "invalid_scope" },
  { name: "PKCE method plain", params: { code_challenge: CHALLENGE, code_challenge_method: "plain" }, error: "invalid_request" },
  { name: "a challenge without method (plain by default)", params: { code_challenge: CHALLENGE }, error: "invalid_request" },
  { name: "a method without challenge", params: { code_challenge_method: "S256" }, error: "invalid_request" },
  { name: "a malformed challenge", params: { code_challenge: "short", code_challenge_method: "S256" }, error: "invalid_request" },
  { name: "no challenge when PKCE is required", params: {}, error: "invalid_request", env: { FIELDGATE_REQUIRE_PKCE: "true" } },
];

for (const row of redirected) {
  test(`authorize redirects with ${row.error} for ${row.name}`, async () => {
    const t = await openTestApp(row.env);
    const { clientId } = await t.seed.client();
    const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, row.params)}`));
    assert.equal(res.status, 302);
    const url = location(res);
    assert.equal(url.origin + url.pathname, "https://client.example/cb");
    assert.equal(url.searchParams.get("error"), row.error);
    assert.equal(url.searchParams.get("state"), "xyz-state");
    assert.equal(url.searchParams.get("iss"), "http://fieldgate.test");
    assert.ok(url.searchParams.get("error_description"));
    assert.equal(url.searchParams.get("code"), null);
  });
}

test("an over-long state is refused and not echoed back in the error redirect", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { state: "s".repeat(1_025) })}`));
  assert.equal(res.status, 302);
  const url = location(res);
  assert.equal(url.searchParams.get("error"), "invalid_request");
  assert.match(url.searchParams.get("error_description") ?? "", /state is too long/);
  assert.equal(url.searchParams.get("state"), null);
});

// RFC 6749 Appendix A.5: state is VSCHAR (%x20-7E). Anything else could never be approved: the browser rewrites CR,
// LF and NUL in the consent form's hidden input, so its token (bound to the exact request) never matched.
const invalidStates: Array<{ name: string; state: string }> = [
  { name: "CR", state: "a\rb" },
  { name: "LF", state: "a\nb" },
  { name: "CRLF", state: "a\r\nSet-Cookie: x=1" },
  { name: "NUL", state: "a\u0000b" },
  { name: "a tab", state: "a\tb" },
  { name: "DEL", state: "a\u007fb" },
  { name: "a non-ASCII letter", state: "caf\u00e9" },
  { name: "an emoji", state: "a\u{1f600}" },
];

for (const row of invalidStates) {
  test(`a state with ${row.name} is refused as invalid_request and not echoed back`, async () => {
    const t = await openTestApp();
    const { clientId } = await t.seed.client();
    const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { state: row.state })}`));
    assert.equal(res.status, 302);
    const url = location(res);
    assert.equal(url.origin + url.pathname, "https://client.example/cb");
    assert.equal(url.searchParams.get("error"), "invalid_request");
    assert.match(url.searchParams.get("error_description") ?? "", /state/);
    assert.equal(url.searchParams.get("state"), null);
    assert.equal(url.searchParams.get("iss"), "http://fieldgate.test");
  });
}

test("a consent form POST whose state is outside VSCHAR mints no code", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  const codes = countCodes(r.t);
  const res = await r.browser.post("/oauth/authorize", { ...fields, state: "xyz\r\nstate", decision: "approve" });
  assert.equal(res.status, 303);
  assert.equal(location(res).searchParams.get("error"), "invalid_request");
  assert.equal(codes(), 0);
});

test("authorize accepts the registered scopes in any order", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client({ scope: "fields:read" });
  const res = await t.app.fetch(new Request(`http://fieldgate.test${authorizePath(clientId, { scope: " fields:read " })}`));
  assert.equal(res.status, 200);
});

test("authorize shows the sign-in page, naming the application, when not signed in", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client({ name: "Crop <Planner>" });
  const browser = testBrowser(t.app);
  const res = await browser.get(authorizePath(clientId));
  assert.equal(res.status, 200);
  assertPageHeaders(res);
  assert.match(res.headers.get("content-security-policy") ?? "", /form-action 'self' https:\/\/client\.example/);
  const body = await res.text();
  assert.match(body, /Crop &lt;Planner&gt;/);
  assert.equal(formFields(body, "/signin").next, authorizePath(clientId));
  assert.equal(browser.cookies.has("fieldgate_presession"), true);
});

// The URL parser leaves a backslash in a query raw, and sign-in refuses any backslash in next (in a path it can name
// another host): the sign-in page must carry the request re-encoded, or the user lands on /account instead.
test("sign-in leads back to an authorization request whose query holds a raw backslash", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const request = `${authorizePath(clientId, { state: undefined })}&state=a\\b`;
  assert.match(new URL(request, "http://fieldgate.test").search, /state=a\\b$/, "the backslash stays raw in the URL");
  const fields = formFields(await (await browser.get(request)).text(), "/signin");
  const res = await browser.post("/signin", { ...fields, username: user.username, password: user.password });
  assert.equal(res.status, 303);
  const next = new URL(res.headers.get("location")!, "http://fieldgate.test");
  assert.equal(next.pathname, "/oauth/authorize");
  assert.equal(next.searchParams.get("client_id"), clientId);
  assert.equal(next.searchParams.get("state"), "a\\b");
  const consent = await (await browser.get(next.pathname + next.search)).text();
  const approved = await browser.post("/oauth/authorize", { ...formFields(consent, "/oauth/authorize"), decision: "approve" });
  assert.equal(approved.status, 303);
  assert.match(location(approved).searchParams.get("code") ?? "", /^fgac_/);
  assert.equal(location(approved).searchParams.get("state"), "a\\b");
});

test("authorize shows the consent page with the application and each scope in plain words", async () => {
  const r = await signedIn();
  const res = await r.browser.get(authorizePath(r.clientId));
  assert.equal(res.status, 200);
  assertPageHeaders(res);
  assert.match(res.headers.get("content-security-policy") ?? "", /form-action 'self' https:\/\/client\.example/);
  const body = await res.text();
  assert.match(body, /Field notes app/);
  assert.match(body, /Read your organizations&#39; fields \(names, crops, areas and boundaries\), your username, your name/);
  assert.match(body, /value="approve"/);
  assert.match(body, /value="deny"/);
});

test("approve issues a single code and redirects 303 with code, state and iss", async () => {
  const r = await signedIn();
  const fields = await consentForm(r, { code_challenge: CHALLENGE, code_challenge_method: "S256" });
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  assert.equal(res.status, 303);
  const url = location(res);
  assert.equal(url.origin + url.pathname, "https://client.example/cb");
  assert.equal(url.searchParams.get("state"), "xyz-state");
  assert.equal(url.searchParams.get("iss"), "http://fieldgate.test");
  const code = url.searchParams.get("code") ?? "";
  assert.match(code, /^fgac_[A-Za-z0-9_-]{43}$/);
  const consumed = await r.t.store.tokens.exchangeCode(await sha256Hex(code), await authenticated(r), r.t.clock.nowSeconds(), () => ({ refuse: "inspected only" }));
  assert.equal(consumed.status, "refused");
  if (consumed.status !== "refused") return;
  assert.equal(consumed.code.userId, r.userId);
  assert.equal(consumed.code.redirectUri, "https://client.example/cb");
  assert.equal(consumed.code.scope, "fields:read");
  assert.equal(consumed.code.codeChallenge, CHALLENGE);
  assert.equal(consumed.code.expiresAt - consumed.code.issuedAt, r.t.config.codeTtlSeconds);
  assert.ok(r.t.log.some((l) => l.event === "audit.consent_granted"));
  assert.ok(!JSON.stringify(r.t.log).includes(code), "the code must not be logged");
});

test("the code issued on approval verifies against the PKCE verifier it was made from", async () => {
  const r = await signedIn();
  const fields = await consentForm(r, { code_challenge: await sha256Base64Url("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), code_challenge_method: "S256" });
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  const code = location(res).searchParams.get("code") ?? "";
  const consumed = await r.t.store.tokens.exchangeCode(await sha256Hex(code), await authenticated(r), r.t.clock.nowSeconds(), () => ({ refuse: "inspected only" }));
  assert.equal(consumed.status === "refused" && consumed.code.codeChallenge, CHALLENGE);
});

test("deny redirects 303 with access_denied and state, and issues no code", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  const codes = countCodes(r.t);
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "deny" });
  assert.equal(res.status, 303);
  assert.equal(codes(), 0, "a denial stores no code");
  const url = location(res);
  assert.equal(url.searchParams.get("error"), "access_denied");
  assert.equal(url.searchParams.get("state"), "xyz-state");
  assert.equal(url.searchParams.get("iss"), "http://fieldgate.test");
  assert.equal(url.searchParams.get("code"), null);
  assert.equal(await r.t.store.consents.find(r.userId, (await r.t.store.clients.findByClientId(r.clientId))!.id), undefined);
  assert.ok(r.t.log.some((l) => l.event === "audit.consent_denied"));
});

test("a registered query is kept byte for byte and the response parameters follow it (RFC 6749 §3.1.2)", async () => {
  const registered = "https://client.example/cb?flag&path=/a/b&x=%7E";
  const r = await signedIn({}, { redirectUri: registered });
  // Deny first: an approval is remembered, and the next request would redirect without a consent page.
  for (const decision of ["deny", "approve"]) {
    const fields = await consentForm(r, { redirect_uri: registered });
    const res = await r.browser.post("/oauth/authorize", { ...fields, decision });
    assert.equal(res.status, 303);
    const value = res.headers.get("location") ?? "";
    assert.ok(value.startsWith(`${registered}&`), value);
    const added = new URLSearchParams(value.slice(registered.length + 1));
    assert.deepEqual([...added.keys()], decision === "approve" ? ["code", "state", "iss"] : ["error", "error_description", "state", "iss"]);
    assert.equal(added.get("iss"), "http://fieldgate.test");
  }
});

test("a redirect URI registered before such queries were refused gets its response parameters replaced, never sent twice", async () => {
  const registered = "https://client.example/cb?code=preset&state=old&keep=1";
  const r = await signedIn({}, { redirectUri: registered });
  // Deny first (an approval is remembered): an error response without state carries none of the registered ones.
  const denyFields = await consentForm(r, { redirect_uri: registered, state: undefined });
  const denied = location(await r.browser.post("/oauth/authorize", { ...denyFields, decision: "deny" }));
  assert.equal(denied.searchParams.get("error"), "access_denied");
  assert.deepEqual(denied.searchParams.getAll("code"), []);
  assert.deepEqual(denied.searchParams.getAll("state"), []);
  assert.equal(denied.searchParams.get("keep"), "1");
  const fields = await consentForm(r, { redirect_uri: registered });
  const url = location(await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" }));
  assert.equal(url.searchParams.getAll("code").length, 1);
  assert.match(url.searchParams.get("code")!, /^fgac_/);
  assert.deepEqual(url.searchParams.getAll("state"), ["xyz-state"]);
  assert.equal(url.searchParams.get("keep"), "1");
});

test("a remembered consent skips the consent page and redirects with a fresh code", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  const first = location(await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" }));
  const res = await r.browser.get(authorizePath(r.clientId, { state: "second" }));
  assert.equal(res.status, 302);
  const url = location(res);
  assert.equal(url.searchParams.get("state"), "second");
  assert.match(url.searchParams.get("code") ?? "", /^fgac_/);
  assert.notEqual(url.searchParams.get("code"), first.searchParams.get("code"));
});

test("a HEAD request never mints a code, even with remembered consent", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  const cookie = [...r.browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const res = await r.t.app.fetch(
    new Request(new URL(authorizePath(r.clientId, { state: "head" }), "http://fieldgate.test"), { method: "HEAD", headers: { cookie } }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("location"), null);
});

test("a consent for a different scope is not remembered", async () => {
  const r = await signedIn();
  const client = (await r.t.store.clients.findByClientId(r.clientId))!;
  await r.t.store.consents.grant(r.userId, client.id, { scope: "something:else", now: r.t.clock.nowSeconds() });
  const res = await r.browser.get(authorizePath(r.clientId));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /value="approve"/);
});

test("a state of every printable ASCII character and space round-trips encoded, with no header injection", async () => {
  const r = await signedIn();
  const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join("");
  const state = `${printable} %0D%0ASet-Cookie: x=1`;
  const fields = await consentForm(r, { state });
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  assert.equal(res.status, 303);
  assert.equal(location(res).searchParams.get("state"), state);
  assert.equal(res.headers.getSetCookie().some((c) => c.startsWith("x=")), false);
  assert.doesNotMatch(res.headers.get("location") ?? "", /[\r\n ]/);
});

// A forged or altered consent POST cannot mint a code: the CSRF token binds the session and the exact request.
const tampered: Array<{ name: string; change: (f: Record<string, string>) => Record<string, string>; status: number }> = [
  { name: "no CSRF token", change: ({ csrf: _, ...f }) => f, status: 403 },
  { name: "a garbage CSRF token", change: (f) => ({ ...f, csrf: "A".repeat(43) }), status: 403 },
  { name: "an altered state", change: (f) => ({ ...f, state: "other" }), status: 403 },
  { name: "a removed state", change: ({ state: _, ...f }) => f, status: 403 },
  { name: "an added code_challenge", change: (f) => ({ ...f, code_challenge: CHALLENGE, code_challenge_method: "S256" }), status: 403 },
  { name: "an altered redirect_uri", change: (f) => ({ ...f, redirect_uri: "https://evil.example/cb" }), status: 400 },
  { name: "an unknown decision", change: (f) => ({ ...f, decision: "maybe" }), status: 400 },
];

for (const row of tampered) {
  test(`consent POST with ${row.name} is refused without a code`, async () => {
    const r = await signedIn();
    const fields = { ...(await consentForm(r)), decision: "approve" };
    const codes = countCodes(r.t);
    const res = await r.browser.post("/oauth/authorize", row.change(fields));
    assert.equal(res.status, row.status);
    assert.equal(res.headers.get("location"), null);
    assert.equal(codes(), 0, "a refused form stores no code");
    assertPageHeaders(res);
  });
}

test("a refused consent form asks this session again, with a form of its own that then works", async () => {
  const r = await signedIn();
  const form = await consentForm(r);
  const res = await r.browser.post("/oauth/authorize", { ...form, decision: "approve", csrf: "A".repeat(43) });
  assert.equal(res.status, 403);
  const body = await res.text();
  assert.match(body, /nothing was decided/);
  const again = formFields(body, "/oauth/authorize");
  assert.equal(again.state, form.state);
  const approved = await r.browser.post("/oauth/authorize", { ...again, decision: "approve" });
  assert.equal(approved.status, 303);
  assert.match(location(approved).searchParams.get("code") ?? "", /^fgac_/);
});

test("a consent form from one session cannot be replayed by another session", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  const other = testBrowser(r.t.app);
  const user = await r.t.seed.user();
  await signIn(other, user);
  const codes = countCodes(r.t);
  const res = await other.post("/oauth/authorize", { ...fields, decision: "approve" });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get("location"), null);
  assert.equal(codes(), 0);
  // The other session is asked itself: its page carries a token of its own, not the replayed one.
  const shown = formFields(await res.text(), "/oauth/authorize");
  assert.ok(shown.csrf);
  assert.notEqual(shown.csrf, fields.csrf);
});

test("consent POST after the session ended shows sign-in, then the consent page again, never a code", async () => {
  const r = await signedIn();
  const fields = await consentForm(r, { state: "keep-me" });
  const anonymous = testBrowser(r.t.app);
  const codes = countCodes(r.t);
  const res = await anonymous.post("/oauth/authorize", { ...fields, decision: "approve" });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get("location"), null);
  const signInForm = formFields(await res.text(), "/signin");
  const next = new URL(signInForm.next ?? "", "http://fieldgate.test");
  assert.equal(next.pathname, "/oauth/authorize");
  assert.equal(next.searchParams.get("state"), "keep-me");
  assert.equal(next.searchParams.get("client_id"), r.clientId);
  const signedInAgain = await signIn(anonymous, await r.t.seed.user(), signInForm.next);
  assert.equal(signedInAgain.headers.get("location"), signInForm.next);
  const consent = await anonymous.get(signInForm.next ?? "");
  assert.equal(consent.status, 200);
  assert.match(await consent.text(), /Approve/);
  assert.equal(codes(), 0);
});

test("consent POST without a session for an untrusted client is still an error page", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  const res = await testBrowser(r.t.app).post("/oauth/authorize", { ...fields, redirect_uri: "https://evil.example/cb", decision: "approve" });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
});

test("an expired session shows the sign-in page again", async () => {
  const r = await signedIn();
  r.t.clock.advance(r.t.config.sessionTtlSeconds + 1);
  const body = await (await r.browser.get(authorizePath(r.clientId))).text();
  assert.match(body, /action="\/signin"/);
});

test("a disabled user's session no longer counts", async () => {
  const r = await signedIn();
  await r.t.store.users.setDisabled(r.userId, true);
  const body = await (await r.browser.get(authorizePath(r.clientId))).text();
  assert.match(body, /action="\/signin"/);
});

test("a client disabled between consent page and approval cannot receive a code", async () => {
  const r = await signedIn();
  const fields = await consentForm(r);
  await r.t.store.clients.setDisabled(r.clientId, true);
  const res = await r.browser.post("/oauth/authorize", { ...fields, decision: "approve" });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
});

test("the consent page names the account by display name and by the username signed in with", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client();
  // A person with a display name, and the password of a seeded user (whose hash is reused).
  const seeded = await t.seed.user();
  const { passwordHash } = (await t.store.users.findByUsername(seeded.username))!;
  await t.store.users.insert({ username: "farmer.jo@example.com", name: "Jo Farmer", kind: "person", passwordHash, now: 0 });
  const browser = testBrowser(t.app);
  await signIn(browser, { username: "farmer.jo@example.com", password: seeded.password });
  const body = await (await browser.get(authorizePath(clientId))).text();
  assert.match(body, /Jo Farmer/);
  assert.match(body, /farmer\.jo@example\.com/);
});
