import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { BASE } from "../helpers/requests.ts";
import {
  REDIRECT_URI, RUNS, assertHtmlOrSafeRedirect, assertNoServerErrors, assertStillHealthy, contentType,
  hostileBody, hostileString, lookalikeRedirect,
} from "./hostile.ts";

const FUZZ_ENV = { FIELDGATE_THROTTLE_MAX_FAILURES: "10000" };
const OTHER_REDIRECT = "https://other.example/cb";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

interface World {
  t: TestApp;
  clientId: string;
  otherClientId: string;
  user: { username: string; password: string; id: number };
  anonymous: TestBrowser;
  signedIn: TestBrowser;
}

/** An authorization-code client, a user with remembered consent, and one anonymous and one signed-in browser. */
async function world(): Promise<World> {
  const t = await openTestApp(FUZZ_ENV);
  const client = await t.seed.client();
  const other = await t.seed.client({ redirectUri: "https://other.example/cb" });
  const user = await t.seed.user();
  await t.store.consents.grant(user.id, client.client.id, { scope: "fields:read", now: t.clock.nowSeconds() });
  const signedIn = testBrowser(t.app);
  assert.equal((await signIn(signedIn, user)).status, 303);
  return { t, clientId: client.clientId, otherClientId: other.clientId, user, anonymous: testBrowser(t.app), signedIn };
}

/** Authorization request parameters: plausible values, hostile values, omissions and repeats. */
function authorizeParams(w: World): fc.Arbitrary<[string, string][]> {
  const v = (...valid: string[]) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: hostileString });
  const one = fc.record({
    client_id: fc.oneof({ weight: 6, arbitrary: fc.constant(w.clientId) }, fc.constant(w.otherClientId), hostileString),
    response_type: v("code", "token"),
    redirect_uri: fc.oneof({ weight: 4, arbitrary: fc.constant(REDIRECT_URI) }, lookalikeRedirect, fc.constant(OTHER_REDIRECT)),
    scope: v("fields:read", "fields:write", "openid"),
    state: hostileString,
    code_challenge: v(CHALLENGE),
    code_challenge_method: v("S256", "plain"),
  }, { requiredKeys: ["client_id", "redirect_uri"] });
  const extra = fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, fc.array(fc.tuple(fc.constantFrom("client_id", "redirect_uri", "state", "scope", "response_type"), hostileString), { maxLength: 2 }));
  return fc.tuple(one, extra).map(([o, e]) => [...Object.entries(o), ...e] as [string, string][]);
}

/** When the response goes back to the registered client, `state` comes back unchanged and `iss` names us. */
function assertStateRoundTrip(res: Response, sent: [string, string][]): void {
  const location = res.headers.get("location");
  if (!location || !(location.startsWith(REDIRECT_URI) || location.startsWith(OTHER_REDIRECT))) return;
  const back = new URL(location).searchParams;
  assert.equal(back.get("iss"), BASE);
  const states = sent.filter(([name, value]) => name === "state" && value !== "");
  // Compared with what the URL could carry: URL encoding turns a lone surrogate into U+FFFD before we see it.
  const carried = new URLSearchParams(new URLSearchParams([["state", states[0]?.[1] ?? ""]]).toString()).get("state");
  if (states.length === 1 && back.has("state")) assert.equal(back.get("state"), carried);
}

for (const who of ["anonymous", "signedIn"] as const) {
  test(`GET /oauth/authorize (${who}) answers hostile queries with an HTML page or a redirect to the registered URI only`, async () => {
    const w = await world();
    await fc.assert(
      fc.asyncProperty(authorizeParams(w), async (params) => {
        const res = await w[who].get(`/oauth/authorize?${new URLSearchParams(params)}`);
        assertStateRoundTrip(res, params);
        // The only external target allowed is the redirect URI registered for the client_id the request named.
        const named = params.find(([name]) => name === "client_id")?.[1];
        await assertHtmlOrSafeRedirect(res, named === w.otherClientId ? OTHER_REDIRECT : named === w.clientId ? REDIRECT_URI : undefined);
      }),
      { numRuns: RUNS },
    );
    assertNoServerErrors(w.t);
    await assertStillHealthy(w.t);
  });
}

test("POST /oauth/authorize answers tampered consent forms with an HTML page or a redirect to the registered URI only", async () => {
  const w = await world();
  const consentPage = await (await w.signedIn.get(`/oauth/authorize?${new URLSearchParams({
    client_id: w.otherClientId, response_type: "code", redirect_uri: OTHER_REDIRECT, scope: "fields:read", state: "s",
  })}`)).text();
  const genuine = formFields(consentPage, "/oauth/authorize");
  const field = fc.constantFrom(...Object.keys(genuine), "decision", "csrf");
  const mutation = fc.array(fc.tuple(field, fc.oneof(hostileString, lookalikeRedirect, fc.constantFrom("approve", "deny", w.clientId))), { maxLength: 3 });
  await fc.assert(
    fc.asyncProperty(mutation, fc.constantFrom("approve", "deny", ""), async (changes, decision) => {
      const form: Record<string, string> = { ...genuine, decision };
      for (const [name, value] of changes) form[name] = value;
      const res = await w.signedIn.post("/oauth/authorize", form);
      const location = res.headers.get("location") ?? "";
      // The genuine form targets the other client; a redirect may only go to one of the two registered URIs.
      await assertHtmlOrSafeRedirect(res, location.startsWith("https://other.example/") ? OTHER_REDIRECT : REDIRECT_URI);
    }),
    { numRuns: RUNS },
  );
  assertNoServerErrors(w.t);
  await assertStillHealthy(w.t);
});

const nextValues = fc.constantFrom(
  "/account", "//evil.example/", "/\\evil.example", "https://evil.example/", "/%0d%0aLocation:%20https://evil.example",
  "/\r\nX: 1", "javascript:alert(1)", "/oauth/authorize?client_id=x", "\\\\evil.example", "/\t/evil.example", " /account",
);

test("POST /signin answers hostile forms with an HTML page or a same-origin redirect, never an external one", async () => {
  const w = await world();
  const request = fc.record({
    username: fc.oneof(fc.constant(w.user.username), hostileString),
    password: fc.oneof(fc.constant(w.user.password), hostileString),
    next: fc.oneof(nextValues, hostileString),
    csrf: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileString }),
    raw: fc.option(fc.tuple(hostileBody(hostileString), contentType), { freq: 4 }),
  });
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const browser = testBrowser(w.t.app);
      const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
      const form = { ...fields, username: r.username, password: r.password, next: r.next, ...(r.csrf === undefined ? {} : { csrf: r.csrf }) };
      const res = r.raw
        ? await w.t.app.fetch(new Request(`${BASE}/signin`, {
          method: "POST",
          headers: r.raw[1] === undefined ? {} : { "content-type": r.raw[1] },
          body: r.raw[0] as BodyInit,
        }))
        : await browser.post("/signin", form);
      await assertHtmlOrSafeRedirect(res, undefined);
    }),
    { numRuns: RUNS },
  );
  assertNoServerErrors(w.t);
  await assertStillHealthy(w.t);
});
