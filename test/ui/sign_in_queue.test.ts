// The sign-in's place in the password queue: fair shares per address, returning browsers first, busy refusals counted and audited.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { anotherInstance, buildTestApp, openTestApp, openTestAppOn, type TestApp } from "../helpers/test_app.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { tempDb } from "../helpers/temp_db.ts";
import type { App } from "../../src/app.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/contract.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { holdDerivations, type HeldDerivations } from "../helpers/held_derivations.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import { createBusyAudit } from "../../src/ui/sign_in_queue.ts";

/** One password place and four waiting places: one each per address and username, one kept for returning browsers. */
const SMALL_QUEUE = { FIELDGATE_PASSWORD_CONCURRENCY: "1", FIELDGATE_PASSWORD_QUEUE: "4" };

/**
 * Lets queued microtasks and I/O callbacks run until `condition` holds; fails if it has not within 10 s (a bound,
 * not a measurement: on PostgreSQL each request first waits for its database round trips).
 */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A browser at `ip` holding a sign-in form of `app`, and a way to post it. */
async function readyBrowser(app: App, ip: string, jar: [string, string][] = []) {
  const browser = testBrowser(app, { clientIp: ip });
  const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
  for (const [name, value] of jar) browser.cookies.set(name, value);
  return (username: string, password: string) => browser.post("/signin", { ...fields, username, password });
}

/** A wrong password for a username nobody has, new each time, as the attack of issue 32 sends them. */
const guess = () => [`guess-${crypto.randomUUID()}@example.com`, "not-the-password"] as const;

/**
 * Sends a guess from `ip` and waits until it holds a place (running or waiting); the answer comes wrapped, since an
 * async function would wait for a promise it returned.
 */
async function occupying(t: TestApp, ip: string): Promise<{ answer: Promise<Response> }> {
  const before = t.app.deps.passwordWork.load();
  const post = await readyBrowser(t.app, ip);
  const answer = post(...guess());
  await until(() => {
    const now = t.app.deps.passwordWork.load();
    return now.running + now.waiting === before.running + before.waiting + 1;
  });
  return { answer };
}

/** Releases held derivations one at a time until every response has come back; returns their statuses. */
async function drain(held: HeldDerivations, responses: Promise<Response>[]): Promise<number[]> {
  let done = false;
  const all = Promise.all(responses).finally(() => (done = true));
  for (let released = 0; !done; released++) {
    await Promise.race([held.startedAtLeast(released + 1), all]);
    if (!done) held.releaseNext();
  }
  return (await all).map((r) => r.status);
}

test("a sign-in from a quiet address waits for its turn while another address is refused beyond its share", async () => {
  const t = await openTestApp(SMALL_QUEUE);
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const attacker = [(await occupying(t, "198.51.100.1")).answer, (await occupying(t, "198.51.100.1")).answer];
  const post = await readyBrowser(t.app, "198.51.100.1");
  for (let i = 0; i < 4; i++) assert.equal((await post(...guess())).status, 503, `attacker's extra attempt ${i}`);
  const innocent = (await readyBrowser(t.app, "203.0.113.7"))(user.username, user.password);
  assert.deepEqual(await drain(held, [...attacker, innocent]), [400, 400, 303]);
});

test("busy refusals count against the address that sent them until it is locked out", async () => {
  const t = await openTestApp({ ...SMALL_QUEUE, FIELDGATE_THROTTLE_MAX_FAILURES: "1" });
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const running = (await occupying(t, "198.51.100.1")).answer;
  await held.startedAtLeast(1);
  const waiting = (await occupying(t, "198.51.100.1")).answer;
  const post = await readyBrowser(t.app, "198.51.100.1");
  // The running attempt was counted when its turn came; each refusal adds one, up to the address's limit.
  for (let i = 1; i < SHARED_KEY_FACTOR; i++) assert.equal((await post(...guess())).status, 503, `refusal ${i}`);
  const locked = await post(...guess());
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.headers.get("retry-after")) >= 1);
  const lockouts = t.log.filter((l) => l.event === "audit.throttled" && l.fields.surface === "sign_in");
  assert.deepEqual(lockouts.map((l) => l.fields.ip), ["198.51.100.1"], "the refusal that reached the limit audited the lockout");
  const innocent = (await readyBrowser(t.app, "203.0.113.7"))(user.username, user.password);
  assert.deepEqual(await drain(held, [running, waiting, innocent]), [400, 429, 303], "the waiting guess is refused at its turn");
  assert.equal(held.started.length, 2, "the refused guess cost no derivation");
});

test("busy refusals count against no address but their own: one refused less than its limit still signs in", async () => {
  const t = await openTestApp({ ...SMALL_QUEUE, FIELDGATE_THROTTLE_MAX_FAILURES: "1" });
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const others = [];
  for (const ip of ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"]) others.push((await occupying(t, ip)).answer);
  const flood = await readyBrowser(t.app, "198.51.100.1");
  for (let i = 0; i < 3 * SHARED_KEY_FACTOR; i++) await flood(...guess());
  const post = await readyBrowser(t.app, "203.0.113.7");
  for (let i = 1; i < SHARED_KEY_FACTOR; i++) assert.equal((await post(user.username, user.password)).status, 503, `try ${i}`);
  assert.deepEqual(await drain(held, others), [400, 400, 400, 400]);
  const after = post(user.username, user.password);
  await held.startedAtLeast(5);
  held.releaseNext();
  assert.equal((await after).status, 303, "not locked out by its own refusals, nor by the flood beside it");
});

test("a busy refusal writes at most one throttle counter, its address's: never a username key", async () => {
  const t = await openTestApp(SMALL_QUEUE);
  const held = holdDerivations(t.app);
  const holding = [(await occupying(t, "198.51.100.1")).answer];
  await held.startedAtLeast(1);
  holding.push((await occupying(t, "198.51.100.1")).answer, (await occupying(t, "198.51.100.2")).answer, (await occupying(t, "198.51.100.3")).answer);
  const before = await t.app.deps.throttle.size();
  for (const ip of ["198.51.100.1", "198.51.100.1", "203.0.113.9"]) {
    assert.equal((await (await readyBrowser(t.app, ip))(...guess())).status, 503);
  }
  assert.equal(await t.app.deps.throttle.size(), before + 1, "the new address's key alone; the fresh usernames added nothing");
  await drain(held, holding);
});

test("a browser that signed in before is let in while strangers fill the queue, and checked before them", async () => {
  const t = await openTestApp(SMALL_QUEUE);
  const user = await t.seed.user();
  const before = testBrowser(t.app, { clientIp: "203.0.113.7" });
  assert.equal((await signIn(before, user)).status, 303);
  const device = [...before.cookies].filter(([name]) => name.includes("device"));
  assert.equal(device.length, 1, "the sign-in left a device cookie");
  const held = holdDerivations(t.app);
  const strangers = [];
  for (const ip of ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"]) strangers.push((await occupying(t, ip)).answer);
  assert.equal((await (await readyBrowser(t.app, "198.51.100.5"))(...guess())).status, 503, "no place left for a stranger");
  const returning = (await readyBrowser(t.app, "203.0.113.7", device))(user.username, user.password);
  await until(() => t.app.deps.passwordWork.load().waiting === 4);
  assert.deepEqual(await drain(held, [...strangers, returning]), [400, 400, 400, 400, 303]);
  assert.equal(held.started[1], user.password, "checked right after the running one, ahead of the strangers waiting");
});

test("busy refusals are audited once per address per throttle window", async () => {
  const t = await openTestApp(SMALL_QUEUE);
  const held = holdDerivations(t.app);
  const holding = [(await occupying(t, "198.51.100.1")).answer, (await occupying(t, "198.51.100.1")).answer];
  const busy = () => t.log.filter((l) => l.event === "audit.throttled" && l.fields.surface === "sign_in_busy").map((l) => l.fields.ip);
  const post = await readyBrowser(t.app, "198.51.100.1");
  for (let i = 0; i < 3; i++) assert.equal((await post(...guess())).status, 503);
  assert.deepEqual(busy(), ["198.51.100.1"]);
  assert.equal((await (await readyBrowser(t.app, "198.51.100.1"))(...guess())).status, 503, "another browser, same address");
  assert.deepEqual(busy(), ["198.51.100.1"], "still once");
  t.clock.advance(t.config.throttleWindowSeconds);
  assert.equal((await post(...guess())).status, 503);
  assert.deepEqual(busy(), ["198.51.100.1", "198.51.100.1"], "once more in the next window");
  const rows = await t.store.audit.list({ limit: 100 });
  assert.equal(rows.filter((r) => r.event === "throttled" && r.detail?.surface === "sign_in_busy").length, 2, "audit rows as well as log lines");
  await drain(held, holding);
});

test("sign-ins without a client address share one bucket: one waits, the next is refused, both are answered", async () => {
  const t = await openTestApp(SMALL_QUEUE);
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const unknown = async () => {
    const browser = testBrowser(t.app, { clientIp: "" });
    const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
    return (username: string, password: string) => browser.post("/signin", { ...fields, username, password });
  };
  const first = (await unknown())(...guess());
  await held.startedAtLeast(1);
  const second = (await unknown())(user.username, user.password);
  await until(() => t.app.deps.passwordWork.load().waiting === 1);
  assert.equal((await (await unknown())(...guess())).status, 503);
  assert.deepEqual(await drain(held, [first, second]), [400, 303]);
});

/**
 * Busy refusals on one instance lock the address out on another: the queue is per instance, the failure counts it
 * feeds are the store's (serve --workers on a SQLite file, several servers on PostgreSQL).
 */
async function lockedOutEverywhere(t: TestApp, other: Store): Promise<void> {
  const second = anotherInstance(t, other);
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const holding = [(await occupying(t, "198.51.100.1")).answer];
  await held.startedAtLeast(1);
  holding.push((await occupying(t, "198.51.100.1")).answer);
  const post = await readyBrowser(t.app, "198.51.100.1");
  for (let i = 1; i < SHARED_KEY_FACTOR; i++) assert.equal((await post(...guess())).status, 503, `refusal ${i}`);
  assert.equal((await (await readyBrowser(second, "198.51.100.1"))(...guess())).status, 429, "locked out on the other instance");
  assert.equal((await (await readyBrowser(second, "203.0.113.7"))(user.username, user.password)).status, 303, "another address is not");
  assert.deepEqual(await drain(held, holding), [400, 429]);
}

const SHARED = { ...SMALL_QUEUE, FIELDGATE_THROTTLE_MAX_FAILURES: "1" };

test("busy refusals on one instance lock the address out on another [two workers, one SQLite file]", async () => {
  const db = tempDb("fieldgate-sign-in-queue-");
  const t = buildTestApp({ ...SHARED, FIELDGATE_DB: db.path });
  const other = openStore(db.path);
  try {
    await lockedOutEverywhere(t, other);
  } finally {
    await other.close();
    await t.store.close();
    db.cleanup();
  }
});

postgresTest("busy refusals on one instance lock the address out on another [two instances on PostgreSQL]", async (db) => {
  const t = await openTestAppOn(db.url, SHARED);
  const other = await openPostgresStore(db.url);
  try {
    await lockedOutEverywhere(t, other);
  } finally {
    await Promise.all([t.store.close(), other.close()]);
  }
});

const windows = [
  { name: "first refusal of a bucket", seen: [], at: 100, due: true },
  { name: "same bucket, same window", seen: [["a", 100]], at: 159, due: false },
  { name: "same bucket, next window", seen: [["a", 100]], at: 160, due: true },
  { name: "same bucket after the clock went back", seen: [["a", 100]], at: 40, due: true },
  { name: "another bucket, same window", seen: [["b", 100]], at: 100, due: true },
] as const;

for (const row of windows) {
  test(`busy audit: ${row.name}`, () => {
    const due = createBusyAudit(60);
    for (const [bucket, at] of row.seen) assert.equal(due(bucket, at), true);
    assert.equal(due("a", row.at), row.due);
  });
}
