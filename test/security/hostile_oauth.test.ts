import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { BASE, basicAuth } from "../helpers/requests.ts";
import { clientCredentials, codeTokens, issueCode } from "./grants.ts";
import {
  RUNS, assertNoServerErrors, assertOAuthJson, assertStillHealthy, contentType, hostileBody, hostileQuery,
  hostileString, lookalikeRedirect, post,
} from "./hostile.ts";

// Throttling would turn most generated requests into early 429s; raise it so the fuzzer reaches the grant code.
const FUZZ_ENV = { FIELDGATE_THROTTLE_MAX_FAILURES: "10000" };

interface Fixture {
  t: TestApp;
  values: fc.Arbitrary<string>;
  authorization: fc.Arbitrary<string | undefined>;
  /** Mostly plausible parameter sets (real clients, tokens, codes) with hostile values mixed in. */
  params: fc.Arbitrary<Record<string, string>>;
}

/** An app with one client of each kind and live credentials of each kind, and generators that mix them in. */
async function fixture(): Promise<Fixture> {
  const t = await openTestApp(FUZZ_ENV);
  const code = await t.seed.client();
  const cc = await t.seed.client({ grant: "client_credentials" });
  const user = await t.seed.user();
  const fetch = (r: Request) => t.app.fetch(r);
  const access = await clientCredentials(fetch, cc);
  const pair = await codeTokens(fetch, { store: t.store, client: code, userId: user.id, now: t.clock.nowSeconds() });
  const codes = await Promise.all(Array.from({ length: 5 }, () => issueCode(t.store, code, user.id, t.clock.nowSeconds())));
  const known = [code.clientId, code.clientSecret, cc.clientId, cc.clientSecret, access, pair.access_token,
    pair.refresh_token!, ...codes, "authorization_code", "refresh_token", "client_credentials", "access_token", "fields:read"];
  const values = fc.oneof(hostileString, fc.constantFrom(...known), lookalikeRedirect);
  const ascii = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, "x"));
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    fc.constantFrom(basicAuth(cc.clientId, cc.clientSecret), basicAuth(code.clientId, code.clientSecret), `Bearer ${access}`, "Basic", "Bearer", "Basic ===="),
    ascii.map((s) => `Bearer ${s}`),
    ascii.map((s) => `Basic ${s}`),
    fc.tuple(fc.constantFrom(cc.clientId, code.clientId, ""), hostileString).map(([id, secret]) => basicAuth(id, secret.replace(/[\ud800-\udfff]/g, "?"))),
    fc.uint8Array({ maxLength: 40 }).map((b) => `Basic ${btoa(String.fromCharCode(...b))}`),
    ascii,
  );
  const credentials = fc.oneof(
    fc.constant({ client_id: code.clientId, client_secret: code.clientSecret }),
    fc.constant({ client_id: cc.clientId, client_secret: cc.clientSecret }),
    fc.record({ client_id: fc.oneof(values, fc.constantFrom(code.clientId, cc.clientId)), client_secret: values }, { requiredKeys: [] }),
  );
  const rest = fc.record({
    grant_type: fc.oneof(fc.constantFrom("authorization_code", "refresh_token", "client_credentials"), values),
    code: fc.oneof(fc.constantFrom(...codes), values),
    redirect_uri: lookalikeRedirect,
    refresh_token: fc.oneof(fc.constant(pair.refresh_token!), values),
    token: fc.oneof(fc.constantFrom(access, pair.access_token, pair.refresh_token!), values),
    token_type_hint: fc.oneof(fc.constantFrom("access_token", "refresh_token"), values),
    scope: fc.oneof(fc.constant("fields:read"), values),
    code_verifier: values,
  }, { requiredKeys: [] });
  const params = fc.tuple(credentials, rest).map(([c, r]) => ({ ...c, ...r }) as Record<string, string>);
  return { t, values, authorization, params };
}

function formEncoded(type: string | undefined, fallback: boolean): boolean {
  if (type === "application/json") return false;
  if (type === "application/x-www-form-urlencoded") return true;
  return fallback;
}

/** Plausible requests most of the time, so the fuzzer gets past parsing and client authentication. */
function oauthRequest(f: Fixture) {
  const type = fc.oneof({ weight: 6, arbitrary: fc.constantFrom("application/json", "application/x-www-form-urlencoded") }, { weight: 1, arbitrary: contentType });
  return fc.record({
    type,
    asForm: fc.boolean(),
    params: f.params,
    raw: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileBody(f.values) }),
    authorization: f.authorization,
    query: fc.oneof({ weight: 6, arbitrary: fc.constant("") }, { weight: 1, arbitrary: hostileQuery }),
  }).map((r) => ({
    ...r,
    // The encoding follows the declared type unless the type itself is the hostile part.
    body: r.raw ?? (formEncoded(r.type, r.asForm) ? new URLSearchParams(r.params).toString() : JSON.stringify(r.params)),
  }));
}

const postEndpoints = ["/oauth/token", "/oauth/revoke", "/oauth/introspect"];

for (const path of postEndpoints) {
  test(`${path} answers any body, Content-Type, query and Authorization with an RFC 6749 JSON error, never a 5xx`, async () => {
    const f = await fixture();
    const request = oauthRequest(f);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = r.authorization === undefined ? {} : { authorization: r.authorization };
        await assertOAuthJson(await f.t.app.fetch(post(path, r.body, r.type, headers, r.query)));
      }),
      { numRuns: RUNS },
    );
    assertNoServerErrors(f.t);
    await assertStillHealthy(f.t);
  });
}

test("/oauth/token answers duplicated and conflicting form parameters with invalid_request", async () => {
  const f = await fixture();
  const names = fc.constantFrom("grant_type", "client_id", "client_secret", "code", "redirect_uri", "refresh_token");
  await fc.assert(
    fc.asyncProperty(names, f.values, f.values, async (name, a, b) => {
      const body = new URLSearchParams([["grant_type", "client_credentials"], [name, a], [name, b]]).toString();
      const res = await f.t.app.fetch(post("/oauth/token", body, "application/x-www-form-urlencoded"));
      await assertOAuthJson(res.clone());
      // A repeated parameter is refused before anything else is looked at (RFC 6749 §3.2), unless the body was too large.
      if (res.status !== 413) assert.equal((await res.json()).error, "invalid_request");
    }),
    { numRuns: RUNS },
  );
  await assertStillHealthy(f.t);
});

test("/oauth/token/info answers any Authorization header and query with JSON, and 401 always carries a Bearer challenge", async () => {
  const f = await fixture();
  await fc.assert(
    fc.asyncProperty(f.authorization, fc.option(hostileQuery, { nil: "" }), fc.constantFrom("GET", "HEAD", "POST"), async (authorization, query, method) => {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const res = await f.t.app.fetch(new Request(`${BASE}/oauth/token/info${query ? `?${query}` : ""}`, { method, headers }));
      assert.ok(res.status < 500);
      if (method === "HEAD") return;
      await assertOAuthJson(res.clone());
      if (res.status === 401) assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer /);
      if (res.status === 200) assert.equal(authorization?.startsWith("Bearer fgat_"), true, "200 only for a real token");
    }),
    { numRuns: RUNS },
  );
  assertNoServerErrors(f.t);
  await assertStillHealthy(f.t);
});
