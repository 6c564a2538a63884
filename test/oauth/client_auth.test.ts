import { test } from "../helpers/bounded.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { basicAuth, postForm, postJson } from "../helpers/requests.ts";
import { refuseQueryCredentials } from "../../src/oauth/client_auth.ts";
import { isOAuthError } from "../../src/oauth/errors.ts";
import { StoreBusyError } from "../../src/store/errors.ts";

const MAX = 3;

function cc(clientId: string, secret: string) {
  return postJson("/oauth/token", {
    grant_type: "client_credentials",
    client_id: clientId,
    client_secret: secret,
  });
}

function throttledApp(): Promise<TestApp> {
  return openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: String(MAX), FIELDGATE_THROTTLE_WINDOW: "60" });
}

test("client auth throttles repeated failures with 429, Retry-After and an RFC 6749 JSON error", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.7" };
  for (let i = 0; i < MAX; i++) {
    assert.equal((await t.app.fetch(cc(client.clientId, "wrong"), ip)).status, 401);
  }
  const blocked = await t.app.fetch(cc(client.clientId, "wrong"), ip);
  assert.equal(blocked.status, 429);
  assert.equal(blocked.headers.get("retry-after"), "60");
  assert.equal(blocked.headers.get("cache-control"), "no-store");
  const body = await blocked.json();
  assert.equal(typeof body.error, "string");
  assert.equal(typeof body.error_description, "string");
  // Even the right secret is refused from that address while throttled: no oracle for a lucky guess.
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 429);
  const events = await t.store.audit.list({});
  assert.equal(events.filter((e) => e.event === "client_auth_failed").length, MAX);
  // One "throttled" row when the lockout began, none for each refused request after it.
  assert.equal(events.filter((e) => e.event === "throttled").length, 1);
  assert.ok(!JSON.stringify(events).includes(client.clientSecret));
});

test("client auth throttle: the legitimate client from another address is never slowed", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const attacker = { remoteAddress: "203.0.113.7" };
  for (let i = 0; i < MAX + 5; i++) await t.app.fetch(cc(client.clientId, "wrong"), attacker);
  const legit = await t.app.fetch(cc(client.clientId, client.clientSecret), {
    remoteAddress: "198.51.100.20",
  });
  assert.equal(legit.status, 200);
});

test("client auth throttle: spraying many client_ids from one address is throttled by address", async () => {
  const t = await throttledApp();
  const ip = { remoteAddress: "203.0.113.9" };
  // The bare address is a shared key: it tolerates SHARED_KEY_FACTOR times more failures than one client.
  const limit = MAX * SHARED_KEY_FACTOR;
  for (let i = 0; i < limit - 1; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), ip);
  assert.equal((await t.app.fetch(cc("guess-last", "wrong"), ip)).status, 401, "the last tolerated failure");
  const res = await t.app.fetch(cc("guess-new", "wrong"), ip);
  assert.equal(res.status, 429);
});

test("client auth throttle: rotating addresses inside one IPv6 /64 counts against the same keys", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  for (let i = 0; i < MAX; i++) {
    const res = await t.app.fetch(cc(client.clientId, "wrong"), { remoteAddress: `2001:db8:7:7::${i + 1}` });
    assert.equal(res.status, 401);
  }
  const fresh = { remoteAddress: "2001:db8:7:7:ffff:1:2:3" };
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), fresh)).status, 429);
  // Another /64 is another subscriber: not slowed.
  const other = { remoteAddress: "2001:db8:7:8::1" };
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), other)).status, 200);
});

test("client auth throttle: spraying client_ids across one IPv6 /64 is throttled by the /64", async () => {
  const t = await throttledApp();
  const limit = MAX * SHARED_KEY_FACTOR;
  for (let i = 0; i < limit; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), { remoteAddress: `2001:db8:9:9::${(i + 1).toString(16)}` });
  const res = await t.app.fetch(cc("guess-new", "wrong"), { remoteAddress: "2001:db8:9:9:abcd::1" });
  assert.equal(res.status, 429);
});

test("client auth throttle: one client's failures do not lock out a neighbour at the same address", async () => {
  const t = await throttledApp();
  const ip = { remoteAddress: "203.0.113.10" };
  const careless = await t.seed.client({ grant: "client_credentials" });
  const neighbour = await t.seed.client({ grant: "client_credentials" });
  for (let i = 0; i < MAX; i++) await t.app.fetch(cc(careless.clientId, "wrong"), ip);
  assert.equal((await t.app.fetch(cc(careless.clientId, careless.clientSecret), ip)).status, 429);
  assert.equal((await t.app.fetch(cc(neighbour.clientId, neighbour.clientSecret), ip)).status, 200);
});

test("client auth throttle: the window ends and a success resets the client's count", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.7" };
  for (let i = 0; i < MAX; i++) await t.app.fetch(cc(client.clientId, "wrong"), ip);
  t.clock.advance(59);
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 429);
  t.clock.advance(1);
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 200);
  // After the success the pair starts from zero: MAX - 1 failures do not throttle.
  for (let i = 0; i < MAX - 1; i++) await t.app.fetch(cc(client.clientId, "wrong"), ip);
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 200);
});

test("client auth throttle also guards revocation and introspection", async () => {
  for (const path of ["/oauth/revoke", "/oauth/introspect"]) {
    const t = await throttledApp();
    const client = await t.seed.client();
    const ip = { remoteAddress: "203.0.113.7" };
    const req = () => postJson(path, { token: "x", client_id: client.clientId, client_secret: "wrong" });
    for (let i = 0; i < MAX; i++) assert.equal((await t.app.fetch(req(), ip)).status, 401);
    assert.equal((await t.app.fetch(req(), ip)).status, 429, path);
  }
});

test("client auth decodes RFC 6749 form-encoded Basic credentials", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  // basicAuth form-encodes; a raw "+" in the secret would otherwise decode as a space.
  const res = await t.app.fetch(
    postForm("/oauth/token", { grant_type: "client_credentials" }, {
      authorization: basicAuth(client.clientId, client.clientSecret),
    }),
  );
  assert.equal(res.status, 200);
  const plus = await t.app.fetch(postForm("/oauth/token", { grant_type: "client_credentials" }, {
    authorization: "Basic " + btoa(`${client.clientId}:${client.clientSecret}+`),
  }));
  assert.equal(plus.status, 401);
  assert.equal(plus.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
});

test("client auth: Basic with an empty user is invalid_client", async () => {
  const t = await openTestApp();
  const res = await t.app.fetch(
    postForm("/oauth/token", { grant_type: "client_credentials" }, {
      authorization: "Basic " + btoa(":secret"),
    }),
  );
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_client");
});

test("client auth: an unknown client and a wrong secret answer identically", async () => {
  const t = await openTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const unknown = await t.app.fetch(cc("no-such-client", client.clientSecret));
  const wrong = await t.app.fetch(cc(client.clientId, "wrong"));
  assert.equal(unknown.status, wrong.status);
  assert.deepEqual(await unknown.json(), await wrong.json());
});

const QUERY_ROWS = [
  "client_id",
  "client_secret",
  "code",
  "code_verifier",
  "refresh_token",
  "token",
  "access_token",
];
for (const name of QUERY_ROWS) {
  test(`refuseQueryCredentials refuses ${name} in the URL`, () => {
    assert.throws(
      () => refuseQueryCredentials(new URL(`http://x/oauth/token?${name}=v`)),
      (e) => isOAuthError(e) && e.code === "invalid_request",
    );
  });
}

test("refuseQueryCredentials allows unrelated query parameters", () => {
  refuseQueryCredentials(new URL("http://x/oauth/token?trace=1"));
});

test("client auth throttle: unknown client_ids, however many or long, add no key of their own", async () => {
  const t = await throttledApp();
  const ip = { remoteAddress: "203.0.113.7" };
  const huge = "x".repeat(20_000);
  assert.equal((await t.app.fetch(cc(huge, "wrong"), ip)).status, 401);
  for (let i = 0; i < 200; i++) await t.app.fetch(cc(`random-${i}`, "wrong"), ip);
  // Rotating random ids must neither grow the table nor mint keys: the address's counter is the only one.
  assert.equal(await t.app.deps.throttle.size(), 1);
  assert.equal(await t.store.throttles.count("failures:ip:203.0.113.7"), 1);
  const events = await t.store.audit.list({});
  assert.ok(events.every((e) => (e.clientId ?? "").length <= 100));
});

test("client auth throttle: a registered client that is not failing is answered at an address others have locked", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.12" };
  for (let i = 0; i < MAX * SHARED_KEY_FACTOR; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), ip);
  assert.equal((await t.app.fetch(cc("guess-new", "wrong"), ip)).status, 429, "the address is locked for unknown ids");
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 200);
  // Basic credentials are the same client: answered too.
  const basic = postForm("/oauth/token", { grant_type: "client_credentials" }, { authorization: basicAuth(client.clientId, client.clientSecret) });
  assert.equal((await t.app.fetch(basic, ip)).status, 200);
  // Requests that name no client stay refused there.
  assert.equal((await t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials" }), ip)).status, 429);
});

test("client auth throttle: a registered client's failures count toward its address's limit for unknown ids", async () => {
  const t = await throttledApp();
  const ip = { remoteAddress: "203.0.113.14" };
  const clients = [await t.seed.client({ grant: "client_credentials" }), await t.seed.client({ grant: "client_credentials" })];
  for (const client of clients) for (let i = 0; i < MAX; i++) await t.app.fetch(cc(client.clientId, "wrong"), ip);
  const limit = MAX * SHARED_KEY_FACTOR;
  for (let i = 0; i < limit - clients.length * MAX - 1; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), ip);
  assert.equal((await t.app.fetch(cc("guess-last", "wrong"), ip)).status, 401, "the last tolerated failure");
  assert.equal((await t.app.fetch(cc("guess-new", "wrong"), ip)).status, 429);
});

test("client auth throttle: a registered client failing at an address others have locked gets its own limit, then 429", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.13" };
  for (let i = 0; i < MAX * SHARED_KEY_FACTOR; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), ip);
  const statuses: number[] = [];
  for (let i = 0; i < MAX + 2; i++) statuses.push((await t.app.fetch(cc(client.clientId, "wrong"), ip)).status);
  assert.deepEqual(statuses, [...Array(MAX).fill(401), 429, 429]);
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 429, "no oracle for a lucky guess");
});

test("client auth throttle: a real client's success does not clear its address's count (no laundering a spray)", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.11" };
  const limit = MAX * SHARED_KEY_FACTOR;
  for (let i = 0; i < limit - 1; i++) await t.app.fetch(cc(`guess-${i}`, "wrong"), ip);
  // The attacker's own client (or any honest one behind the same address) authenticates in between ...
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 200);
  // ... which clears that client's key only: the address is one failure from its limit, and then at it.
  assert.equal((await t.app.fetch(cc("guess-after", "wrong"), ip)).status, 401);
  assert.equal((await t.app.fetch(cc("guess-next", "wrong"), ip)).status, 429);
});

// An embedder's app.fetch call without a remote address: no caller can be told from another.

test("without the caller's address, nobody's failures lock the real client out, and the embedder is told once", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  for (let i = 0; i < MAX * SHARED_KEY_FACTOR + 5; i++) {
    assert.equal((await t.app.fetch(cc(i % 2 ? client.clientId : `bogus-${i}`, "wrong"))).status, 401);
  }
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret))).status, 200);
  assert.equal(t.log.filter((l) => l.event === "client_address_unknown").length, 1);
});

test("a remote address that is not an IP address counts as unknown: not a throttle key, not an audit value", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const odd = { remoteAddress: "not an ip\n" };
  for (let i = 0; i < MAX + 2; i++) assert.equal((await t.app.fetch(cc(client.clientId, "wrong"), odd)).status, 401);
  const events = await t.store.audit.list({});
  assert.ok(events.length > 0);
  assert.ok(events.every((e) => e.ip === "unknown"), JSON.stringify(events.map((e) => e.ip)));
  assert.equal(t.log.filter((l) => l.event === "client_address_unknown").length, 1);
});

test("with the caller's address the same failures still lock the client out from there", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "198.51.100.4" };
  for (let i = 0; i < MAX; i++) await t.app.fetch(cc(client.clientId, "wrong"), ip);
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 429);
  assert.equal(t.log.filter((l) => l.event === "client_address_unknown").length, 0);
});

test("client auth throttle holds for wrong secrets sent in parallel, though the digest awaits", { timeout: 20_000 }, async () => {
  // The test app hashes with crypto.subtle, the default an embedder gets, which yields to the event loop: a limit
  // checked only before the awaits would let all twenty pass it and be checked.
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.9" };
  const statuses = await Promise.all(Array.from({ length: 20 }, () => t.app.fetch(cc(client.clientId, "wrong"), ip).then((r) => r.status)));
  assert.deepEqual([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [MAX, 20 - MAX]);
  const events = await t.store.audit.list({});
  assert.equal(events.filter((e) => e.event === "client_auth_failed").length, MAX);
  assert.equal(events.filter((e) => e.event === "throttled").length, 1);
});

test("client auth: honest requests in parallel, many more than the limit, are all answered, none refused", { timeout: 20_000 }, async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.10" };
  const honest = Array.from({ length: 10 * MAX }, () => t.app.fetch(cc(client.clientId, client.clientSecret), ip));
  // Failures one short of the limit in the same burst: the successes wait for them instead of being refused.
  const wrong = Array.from({ length: MAX - 1 }, () => t.app.fetch(cc(client.clientId, "wrong"), ip));
  const statuses = await Promise.all([...wrong, ...honest].map((p) => p.then((r) => r.status)));
  assert.deepEqual(statuses.slice(0, MAX - 1), Array(MAX - 1).fill(401));
  assert.deepEqual(statuses.slice(MAX - 1), Array(10 * MAX).fill(200));
});

test("client auth: an attempt the store fails to decide counts nothing, so later ones are checked", async () => {
  const t = await throttledApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const ip = { remoteAddress: "203.0.113.11" };
  const authenticate = t.store.throttles.authenticateClient.bind(t.store.throttles);
  t.store.throttles.authenticateClient = () => Promise.reject(new StoreBusyError("database is locked"));
  const failed = await Promise.all(Array.from({ length: 2 * MAX }, () => t.app.fetch(cc(client.clientId, "wrong"), ip).then((r) => r.status)));
  assert.deepEqual(failed, Array(2 * MAX).fill(503), "no guess was checked, so none is counted");
  t.store.throttles.authenticateClient = authenticate;
  assert.equal((await t.app.fetch(cc(client.clientId, client.clientSecret), ip)).status, 200);
});
