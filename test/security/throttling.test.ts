import { test } from "../helpers/bounded.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, testBrowser } from "../helpers/browser_session.ts";
import { postJson } from "../helpers/requests.ts";
import { StoreBusyError } from "../../src/store/errors.ts";

const ATTACKER = "198.51.100.7";
const HONEST = "203.0.113.20";

function ccRequest(t: TestApp, clientId: string, secret: string, ip: string): Promise<Response> {
  return t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: secret }), { remoteAddress: ip });
}

async function failClientAuth(t: TestApp, clientId: string, ip: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await ccRequest(t, clientId, "fgcs_wrong", ip)).status);
  return statuses;
}

test("failed client authentication is throttled: 429 with Retry-After once the limit is reached, even for the right secret", async () => {
  const t = await openTestApp();
  const victim = await t.seed.client({ grant: "client_credentials" });
  const max = t.config.throttleMaxFailures;
  assert.deepEqual(await failClientAuth(t, victim.clientId, ATTACKER, max), Array(max).fill(401));
  const refused = await ccRequest(t, victim.clientId, victim.clientSecret, ATTACKER);
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error, "too_many_requests");
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  t.clock.advance(t.config.throttleWindowSeconds);
  assert.equal((await ccRequest(t, victim.clientId, victim.clientSecret, ATTACKER)).status, 200, "the window passes");
});

test("failures against a client_id from one address do not lock out that client at another address", async () => {
  const t = await openTestApp();
  const victim = await t.seed.client({ grant: "client_credentials" });
  await failClientAuth(t, victim.clientId, ATTACKER, t.config.throttleMaxFailures * 3);
  assert.equal((await ccRequest(t, victim.clientId, victim.clientSecret, HONEST)).status, 200);
});

test("a successful client is not throttled by another client's failures from another address", async () => {
  const t = await openTestApp();
  const noisy = await t.seed.client({ grant: "client_credentials" });
  const honest = await t.seed.client({ grant: "client_credentials" });
  await failClientAuth(t, noisy.clientId, ATTACKER, t.config.throttleMaxFailures * 3);
  for (let i = 0; i < 20; i++) assert.equal((await ccRequest(t, honest.clientId, honest.clientSecret, HONEST)).status, 200);
  const metrics = t.log.filter((l) => l.event === "request" && l.fields.status === 429);
  assert.ok(metrics.length > 0, "the noisy client was throttled meanwhile");
});

// Issue 23: from one address (a NAT, a proxy without FIELDGATE_TRUST_PROXY), other parties' failures must not slow a
// registered client that is not failing, at any client-authenticated endpoint.
const CLIENT_AUTH_ENDPOINTS: Array<{ path: string; body: Record<string, string> }> = [
  { path: "/oauth/token", body: { grant_type: "client_credentials" } },
  { path: "/oauth/revoke", body: { token: "fgat_not-a-token", token_type_hint: "access_token" } },
  { path: "/oauth/introspect", body: { token: "fgat_not-a-token" } },
];

for (const { path, body } of CLIENT_AUTH_ENDPOINTS) {
  test(`${path}: 1,000 failures over 500 client_ids and 100 for a real one from an address leave a well-behaved client there unslowed`, async () => {
    const t = await openTestApp();
    const failing = await t.seed.client({ grant: "client_credentials" });
    const honest = await t.seed.client({ grant: "client_credentials" });
    const send = (clientId: string, secret: string) =>
      t.app.fetch(postJson(path, { ...body, client_id: clientId, client_secret: secret }), { remoteAddress: ATTACKER });
    const unknownId = (i: number) => `unknown-client-${i % 500}`;
    for (let i = 0; i < 1_000; i++) {
      assert.ok([401, 429].includes((await send(unknownId(i), `fgcs_wrong-${i}`)).status));
      if (i % 10 === 0) assert.ok([401, 429].includes((await send(failing.clientId, `fgcs_wrong-${i}`)).status));
    }
    assert.equal((await send(honest.clientId, honest.clientSecret)).status, 200, "the well-behaved client's first request");
    for (const [clientId, secret] of [[failing.clientId, "fgcs_wrong"], [failing.clientId, failing.clientSecret], [unknownId(0), "fgcs_wrong"], ["unknown-client-new", "fgcs_wrong"]] as const) {
      const refused = await send(clientId, secret);
      assert.equal(refused.status, 429, clientId);
      assert.equal((await refused.json()).error, "too_many_requests");
      assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    }
    assert.equal((await send(honest.clientId, honest.clientSecret)).status, 200, "and every request after it");
  });
}

async function signInAttempt(t: TestApp, ip: string, username: string, password: string): Promise<Response> {
  const browser = testBrowser(t.app, { clientIp: ip });
  const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
  return browser.post("/signin", { ...fields, username, password });
}

test("failed sign-in is throttled: 429 page once the limit is reached, even for the right password", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  for (let i = 0; i < t.config.throttleMaxFailures; i++) {
    assert.equal((await signInAttempt(t, ATTACKER, user.username, `guess-${i}`)).status, 400);
  }
  const refused = await signInAttempt(t, ATTACKER, user.username, user.password);
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get("content-type") ?? "", /^text\/html/);
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
});

test("sign-in guesses sent in parallel are held to the limit: the rest are refused before the password is checked", async () => {
  // Room for every guess in one address's and one username's share of the password queue (a quarter of it), so
  // that only the failure limit refuses.
  const t = await openTestApp({ FIELDGATE_PASSWORD_QUEUE: "1000" });
  const user = await t.seed.user();
  const limit = t.config.throttleMaxFailures;
  // Every form is fetched first, so the guesses themselves arrive together.
  const ready = await Promise.all(Array.from({ length: limit * 3 }, async () => {
    const browser = testBrowser(t.app, { clientIp: ATTACKER });
    return { browser, fields: formFields(await (await browser.get("/signin")).text(), "/signin") };
  }));
  const statuses = await Promise.all(ready.map(({ browser, fields }, i) =>
    browser.post("/signin", { ...fields, username: user.username, password: `guess-${i}` }).then((r) => r.status)));
  assert.equal(statuses.filter((s) => s === 400).length, limit, `evaluated guesses: ${statuses.join(",")}`);
  assert.equal(statuses.filter((s) => s === 429).length, limit * 2);
  assert.equal(t.log.filter((l) => l.event === "audit.throttled").length, 1, "one lockout, audited once");
});

test("successful sign-ins do not use up their address's allowance", async () => {
  // The limit on successful sign-ins is raised out of the way: this is about the failure throttle's allowance.
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "1", FIELDGATE_SIGNIN_LIMIT: "100" });
  const user = await t.seed.user();
  for (let i = 0; i < SHARED_KEY_FACTOR + 2; i++) {
    assert.equal((await signInAttempt(t, ATTACKER, user.username, user.password)).status, 303, `sign-in ${i}`);
  }
  assert.equal((await signInAttempt(t, ATTACKER, user.username, "wrong-password")).status, 400);
});

test("a real sign-in from a spraying address does not clear the address's count (no laundering the spray)", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "2" });
  const user = await t.seed.user();
  const limit = 2 * SHARED_KEY_FACTOR;
  // Each guessed username stays under its own limit; only the address key fills up.
  for (let i = 0; i < limit - 1; i++) {
    assert.equal((await signInAttempt(t, ATTACKER, `someone-${i}@example.com`, "Winter2026!")).status, 400, `guess ${i}`);
  }
  assert.equal((await signInAttempt(t, ATTACKER, user.username, user.password)).status, 303);
  // The success took back only its own attempt: one more failure reaches the limit, and then the address is locked.
  assert.equal((await signInAttempt(t, ATTACKER, "someone-else@example.com", "Winter2026!")).status, 400);
  assert.equal((await signInAttempt(t, ATTACKER, "yet-another@example.com", "Winter2026!")).status, 429);
});

test("a sign-in that fails for the database's sake (busy) does not count as a wrong password", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "1" });
  const user = await t.seed.user();
  const lookup = t.store.users.findByUsername;
  t.store.users.findByUsername = async () => {
    throw new StoreBusyError("the database stayed locked by another connection for 5000 ms");
  };
  assert.equal((await signInAttempt(t, ATTACKER, user.username, user.password)).status, 503);
  t.store.users.findByUsername = lookup;
  assert.equal((await signInAttempt(t, ATTACKER, user.username, user.password)).status, 303);
});

test("requests without client credentials, or with another scheme, are throttled by address and audited until then", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "1" });
  const statuses: number[] = [];
  for (let i = 0; i < SHARED_KEY_FACTOR + 3; i++) {
    const headers: Record<string, string> = i % 2 === 0 ? { authorization: "Bearer fgat_x" } : {};
    const res = await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials" }, headers), { remoteAddress: ATTACKER });
    statuses.push(res.status);
  }
  assert.deepEqual(statuses, [...Array(SHARED_KEY_FACTOR).fill(401), 429, 429, 429]);
  const audited = (await t.store.audit.list({})).filter((e) => e.event === "client_auth_failed");
  assert.equal(audited.length, SHARED_KEY_FACTOR, "refused at 429 without an audit row each");
});

test("another user signing in from another address is not throttled by someone else's failed sign-ins", async () => {
  const t = await openTestApp();
  const target = await t.seed.user();
  const honest = await t.seed.user();
  for (let i = 0; i < t.config.throttleMaxFailures * 2; i++) await signInAttempt(t, ATTACKER, target.username, `guess-${i}`);
  assert.equal((await signInAttempt(t, ATTACKER, target.username, target.password)).status, 429);
  assert.equal((await signInAttempt(t, HONEST, honest.username, honest.password)).status, 303);
});

test("a password spray from one address is throttled by address, whichever usernames it tries", async () => {
  const t = await openTestApp();
  const statuses: number[] = [];
  for (let i = 0; i < t.config.throttleMaxFailures * SHARED_KEY_FACTOR + 1; i++) {
    statuses.push((await signInAttempt(t, ATTACKER, `nobody${i}@example.com`, "Summer2026!")).status);
  }
  assert.equal(statuses.at(-1), 429);
});
