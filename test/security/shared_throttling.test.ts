// Throttling across instances: two app instances on one database (--workers on a SQLite file, or two servers whose
// counters are on PostgreSQL) spend one failure budget, with the rules of docs/oauth.md's table unchanged; and an
// instance that decides a client_credentials request on the client as it last read it (TokenClient.remembered, on
// PostgreSQL) answers as if it had read it afresh.
import assert from "node:assert/strict";
import type { App } from "../../src/app.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Store, ThrottleStore } from "../../src/store/contract.ts";
import { test } from "../helpers/bounded.ts";
import { formFields, testBrowser } from "../helpers/browser_session.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { ccRequest } from "../helpers/codes.ts";
import { postJson } from "../helpers/requests.ts";
import { tempDb } from "../helpers/temp_db.ts";
import { anotherInstance, buildTestApp, type InstanceOptions, openTestAppOn, type TestApp } from "../helpers/test_app.ts";

const MAX = 3;
const ENV = { FIELDGATE_THROTTLE_MAX_FAILURES: String(MAX), FIELDGATE_THROTTLE_WINDOW: "60", FIELDGATE_PASSWORD_QUEUE: "100" };
const X = "203.0.113.7";
const Y = "198.51.100.20";

interface Deployment {
  /** The first instance's test app (seeding, clock, log) and both instances. */
  t: TestApp;
  instances: [App, App];
  /** The second instance's store, as an admin command on another host would change the database. */
  other: Store;
  /** Where the instances keep their counters. */
  counters: ThrottleStore;
  /**
   * Digests made of each presented secret, over both instances: every attempt is digested before the store checks
   * it and counts the outcome in one step, and the refused ones are told nothing.
   */
  checks: Map<string, number>;
}

/** A digest that counts the secrets it digests. */
function countingDigest(checks: Map<string, number>) {
  return (value: string) => {
    checks.set(value, (checks.get(value) ?? 0) + 1);
    return sha256Hex(value);
  };
}

/** Two app instances on one database, each with its own connection, its first one for seeding. */
interface Pair {
  t: TestApp;
  other: Store;
  close(): Promise<void>;
}

/** Two instances on one SQLite file, their throttles in it (as `serve --workers 2`). */
function onSqliteFile(options: InstanceOptions): Pair {
  const db = tempDb("fieldgate-shared-throttle-");
  const t = buildTestApp({ ...ENV, FIELDGATE_DB: db.path }, options);
  const other = openStore(db.path);
  return { t, other, close: async () => {
    await other.close();
    await t.store.close();
    db.cleanup();
  } };
}

/** Two instances on one PostgreSQL database, as two servers with FIELDGATE_DATABASE_URL. */
async function onPostgres(url: string, options: InstanceOptions): Promise<Pair> {
  const t = await openTestAppOn(url, ENV, options);
  const other = await openPostgresStore(url);
  return { t, other, close: async () => void await Promise.all([t.store.close(), other.close()]) };
}

/** Runs `run` on two instances whose throttles count in their shared database. */
async function withTwoInstances(run: (d: Deployment) => Promise<void>, open: (options: InstanceOptions) => Promise<Pair> | Pair): Promise<void> {
  const checks = new Map<string, number>();
  const options = { digest: countingDigest(checks) };
  const { t, other, close } = await open(options);
  try {
    const instances: [App, App] = [t.app, anotherInstance(t, other, options)];
    await run({ t, instances, other, counters: t.store.throttles, checks });
  } finally {
    await close();
  }
}

/** Registers `fn` for each way of running several instances, and for one instance where `alone` is set. */
function deploymentTest(name: string, fn: (d: Deployment) => Promise<void>, options: { alone?: boolean } = {}): void {
  if (options.alone) {
    test(`${name} [one instance]`, async () => {
      const checks = new Map<string, number>();
      const t = buildTestApp(ENV, { digest: countingDigest(checks) });
      await fn({ t, instances: [t.app, t.app], other: t.store, counters: t.store.throttles, checks });
    });
  }
  test(`${name} [two workers, one SQLite file]`, () => withTwoInstances(fn, onSqliteFile));
  postgresTest(`${name} [two instances on PostgreSQL]`, (db) => withTwoInstances(fn, (options) => onPostgres(db.url, options)));
}

/** A client_credentials token request to instance `i % 2`, from `ip` (none: no usable caller address). */
function send(d: Deployment, i: number, clientId: string, secret: string, ip?: string): Promise<number> {
  const request = postJson("/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: secret });
  return d.instances[i % 2]!.fetch(request, ip === undefined ? undefined : { remoteAddress: ip }).then((r) => r.status);
}

/** `times` requests, alternating between the instances; their statuses. */
async function sendMany(times: number, request: (i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push(await request(i));
  return statuses;
}

// docs/oauth.md, Throttling: one row per line of its table, then the rule on successes.

deploymentTest("a registered client's failures from one address refuse it there on every instance, and nowhere else", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const neighbour = await d.t.seed.client({ grant: "client_credentials" });
  assert.deepEqual(await sendMany(MAX, (i) => send(d, i, client.clientId, "wrong", X)), Array(MAX).fill(401));
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, X)), [429, 429], "the right secret, on both");
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, Y)), [200, 200], "from another address");
  assert.deepEqual(await sendMany(2, (i) => send(d, i, neighbour.clientId, neighbour.clientSecret, X)), [200, 200], "another client there");
}, { alone: true });

deploymentTest("unknown client_ids count against the address only, which refuses them at ten times the limit", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const limit = MAX * SHARED_KEY_FACTOR;
  assert.deepEqual(await sendMany(limit, (i) => send(d, i, `unknown-${i}`, "wrong", X)), Array(limit).fill(401));
  assert.deepEqual(await sendMany(2, (i) => send(d, i, "unknown-new", "wrong", X)), [429, 429]);
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, X)), [200, 200], "a registered client is still checked");
}, { alone: true });

deploymentTest("requests naming no client count against the address, as unknown ids do", async (d) => {
  const limit = MAX * SHARED_KEY_FACTOR;
  const nameless = (i: number) =>
    d.instances[i % 2]!.fetch(postJson("/oauth/token", { grant_type: "client_credentials" }), { remoteAddress: X }).then((r) => r.status);
  assert.deepEqual(await sendMany(limit + 2, nameless), [...Array(limit).fill(401), 429, 429]);
}, { alone: true });

deploymentTest("without a usable caller address nothing is counted, so nobody's failures lock the client out", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const statuses = await sendMany(MAX * SHARED_KEY_FACTOR + 4, (i) => send(d, i, i % 4 < 2 ? client.clientId : `bogus-${i}`, "wrong"));
  assert.ok(statuses.every((s) => s === 401), statuses.join(","));
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret)), [200, 200]);
  assert.equal(await d.counters.count(""), 0);
}, { alone: true });

deploymentTest("a success clears its client's failures from the address, never the address's count", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const limit = MAX * SHARED_KEY_FACTOR;
  for (const first of [0, 1]) {
    // MAX - 1 failures, then a success on either instance: without the reset, the second round would lock it.
    assert.deepEqual(await sendMany(MAX - 1, (i) => send(d, first + i, client.clientId, "wrong", X)), Array(MAX - 1).fill(401));
    assert.equal(await send(d, first, client.clientId, client.clientSecret, X), 200);
  }
  // The address kept all 2 × (MAX - 1) failures: the unknown ids reach its limit that much sooner.
  const left = limit - 2 * (MAX - 1);
  assert.deepEqual(await sendMany(left, (i) => send(d, i, `unknown-${i}`, "wrong", X)), Array(left).fill(401));
  assert.equal(await send(d, 0, "unknown-last", "wrong", X), 429);
}, { alone: true });

// Across instances.

deploymentTest("wrong secrets sent in parallel to two instances have at most the limit's number of outcomes told", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(d, i, client.clientId, "wrong", X)));
  assert.deepEqual([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [MAX, 20 - MAX]);
  assert.equal(d.checks.get("wrong"), 20, "every guess digested, so none waits for another");
  const events = await d.t.store.audit.list({});
  assert.equal(events.filter((e) => e.event === "client_auth_failed").length, MAX);
  assert.equal(events.filter((e) => e.event === "throttled").length, 1, "one lockout, audited once");
});

deploymentTest("honest requests in parallel to two instances, far more than the limit, are all answered", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  const wrong = Array.from({ length: MAX - 1 }, (_, i) => send(d, i, client.clientId, "wrong", X));
  const honest = Array.from({ length: 10 * MAX }, (_, i) => send(d, i, client.clientId, client.clientSecret, X));
  assert.deepEqual(await Promise.all(wrong), Array(MAX - 1).fill(401));
  assert.deepEqual(await Promise.all(honest), Array(10 * MAX).fill(200));
});

deploymentTest("rotating unknown client_ids over both instances leaves one counter, the address's", async (d) => {
  await sendMany(200, (i) => send(d, i, `random-${i}-${"x".repeat(i)}`, "wrong", X));
  assert.equal(await d.counters.count(""), 1);
});

deploymentTest("failed sign-ins on one instance lock the username from that address on the other", async (d) => {
  const user = await d.t.seed.user();
  const attempt = async (i: number, password: string, ip = X) => {
    const browser = testBrowser(d.instances[i % 2]!, { clientIp: ip });
    const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
    return (await browser.post("/signin", { ...fields, username: user.username, password })).status;
  };
  assert.deepEqual(await sendMany(MAX, (i) => attempt(i, `guess-${i}`)), Array(MAX).fill(400));
  assert.deepEqual(await sendMany(2, (i) => attempt(i, user.password)), [429, 429]);
  assert.equal(await attempt(1, user.password, Y), 303, "from another address the person signs in");
});

deploymentTest("a sign-in whose username holds a NUL is refused as a wrong password, not failed", async (d) => {
  const browser = testBrowser(d.instances[0], { clientIp: X });
  const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
  assert.equal((await browser.post("/signin", { ...fields, username: "a\u0000b@example.com", password: "guess" })).status, 400);
});

// An instance that remembers the client: each instance has issued to it before, so PostgreSQL's instances decide
// the next request on the row they read then, and only the issuance sees the database as it is now.

/** Both instances issue `client` a token from `ip`, so each has read its row. */
async function warm(d: Deployment, client: { clientId: string; clientSecret: string }, ip = X): Promise<void> {
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, ip)), [200, 200]);
}

deploymentTest("failures counted on either instance lock out the right secret on both, though both remember the client", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  await warm(d, client);
  assert.deepEqual(await sendMany(MAX, (i) => send(d, i, client.clientId, "wrong", X)), Array(MAX).fill(401));
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, X)), [429, 429]);
  assert.deepEqual(await sendMany(2, (i) => send(d, i, client.clientId, client.clientSecret, Y)), [200, 200], "from another address");
}, { alone: true });

deploymentTest("a success on an instance that remembers the client still clears its failures", async (d) => {
  const client = await d.t.seed.client({ grant: "client_credentials" });
  await warm(d, client);
  for (const first of [0, 1]) {
    assert.deepEqual(await sendMany(MAX - 1, (i) => send(d, first + i, client.clientId, "wrong", X)), Array(MAX - 1).fill(401));
    assert.equal(await send(d, first, client.clientId, client.clientSecret, X), 200);
  }
  assert.equal(await send(d, 0, client.clientId, "wrong", X), 401, "two rounds of MAX - 1, each cleared: not locked");
}, { alone: true });

/** Instance 0's answer to a client_credentials request: status and error code. */
async function answer(d: Deployment, client: { clientId: string; clientSecret: string }): Promise<[number, string | undefined]> {
  const response = await d.instances[0].fetch(ccRequest(client), { remoteAddress: Y });
  const body = await response.json() as { error?: string };
  return [response.status, body.error];
}

deploymentTest("what another instance changes about a remembered client decides instance 0's next token request", async (d) => {
  const seeded = await d.t.seed.client({ grant: "client_credentials" });
  const { clientId } = seeded;
  const now = d.t.clock.nowSeconds();
  assert.deepEqual(await answer(d, seeded), [200, undefined]);
  await d.other.clients.setDisabled(clientId, true);
  assert.deepEqual(await answer(d, seeded), [401, "invalid_client"], "disabled");
  await d.other.clients.setDisabled(clientId, false);
  assert.deepEqual(await answer(d, seeded), [200, undefined], "enabled again");
  await d.other.clients.setRequireDpop(clientId, true);
  assert.deepEqual(await answer(d, seeded), [400, "invalid_dpop_proof"], "DPoP required");
  await d.other.clients.setRequireDpop(clientId, false);
  assert.deepEqual(await answer(d, seeded), [200, undefined]);
  const userId = seeded.client.integrationUserId!;
  await d.other.users.setDisabled(userId, true);
  assert.deepEqual(await answer(d, seeded), [400, "invalid_grant"], "integration user disabled");
  await d.other.users.setDisabled(userId, false);
  assert.deepEqual(await answer(d, seeded), [200, undefined]);
  const secret = "a-new-secret-of-the-client-after-rotation";
  await d.other.clients.rotateSecret(clientId, { secretHash: await sha256Hex(secret), now, revokeTokens: false });
  assert.deepEqual(await answer(d, seeded), [401, "invalid_client"], "the old secret");
  assert.deepEqual(await answer(d, { clientId, clientSecret: secret }), [200, undefined], "the new one");
  await d.other.clients.remove(clientId, now);
  assert.deepEqual(await answer(d, { clientId, clientSecret: secret }), [401, "invalid_client"], "removed");
  const failed = (await d.t.store.audit.list({})).filter((e) => e.event === "client_auth_failed").map((e) => e.detail?.reason);
  assert.deepEqual(failed, ["client_disabled", "bad_secret", "unknown_client"], "each refusal audited as a fresh read finds it");
}, { alone: true });
