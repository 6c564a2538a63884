// Sign-in cannot take the server's cores or pile up sessions: bounded password work, successes limited, sessions capped.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { holdDerivations } from "../helpers/held_derivations.ts";
import { DIGESTS, PLAIN } from "../helpers/doorkeeper_fixtures.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import { queueShares } from "../../src/http/work_limit.ts";

/** A browser at its own address holding a sign-in form, ready to post. */
async function readyBrowser(t: TestApp, ip: string): Promise<{ browser: TestBrowser; fields: Record<string, string> }> {
  const browser = testBrowser(t.app, { clientIp: ip });
  return { browser, fields: formFields(await (await browser.get("/signin")).text(), "/signin") };
}

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

test("sign-in answers at once with a 503 page and Retry-After once every password place a stranger may take is taken", async () => {
  const t = await openTestApp({ FIELDGATE_PASSWORD_CONCURRENCY: "1", FIELDGATE_PASSWORD_QUEUE: "4" });
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  // One running place and the queue's places but the one kept for browsers that signed in before (work_limit.ts).
  const places = 1 + 4 - queueShares(4).reserved;
  const ready = await Promise.all(Array.from({ length: places + 1 }, (_, i) => readyBrowser(t, `198.51.100.${i + 1}`)));
  // Each from its own address under its own username, so no one's share of the queue is what is full.
  const pending = ready.slice(0, places).map(({ browser, fields }, i) =>
    browser.post("/signin", { ...fields, username: `someone-${i}@example.com`, password: `guess-${i}` }));
  // Every one of them holds a place: running (its derivation started) or waiting (without a limit, all have started).
  await until(() => held.started.length + (t.app.deps.passwordWork?.load().waiting ?? 0) === places);
  const last = ready[places]!;
  const refused = await Promise.race([
    last.browser.post("/signin", { ...last.fields, username: user.username, password: user.password }),
    // Without a limit this request's own derivation starts (and is held), which ends the race instead.
    held.startedAtLeast(places + 1).then(() => undefined),
  ]);
  assert.ok(refused, "the request beyond the queue was held like the others");
  assert.equal(refused.status, 503);
  assert.match(refused.headers.get("content-type") ?? "", /^text\/html/);
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  assert.match(await refused.text(), /busy[^<]*Try again/);
  assert.equal(held.started.length, 1, "only the first password is being derived");
  for (let i = 0; i < places; i++) {
    await held.startedAtLeast(i + 1);
    held.releaseNext();
  }
  assert.deepEqual((await Promise.all(pending)).map((r) => r.status), Array(places).fill(400));
});

test("a sign-in refused as busy does not count against its username (only, once, against its address)", async () => {
  const t = await openTestApp({ FIELDGATE_PASSWORD_QUEUE: "0", FIELDGATE_THROTTLE_MAX_FAILURES: "1" });
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const first = await readyBrowser(t, "192.0.2.1");
  const holding = first.browser.post("/signin", { ...first.fields, username: "someone@example.com", password: "x" });
  await held.startedAtLeast(1);
  const { browser, fields } = await readyBrowser(t, "192.0.2.2");
  assert.equal((await browser.post("/signin", { ...fields, username: user.username, password: user.password })).status, 503);
  held.releaseNext();
  assert.equal((await holding).status, 400);
  const again = signIn(browser, user);
  // Counted as a failure, the busy answer would have used up the one allowed: refused before any derivation.
  const early = await Promise.race([again, held.startedAtLeast(2).then(() => undefined)]);
  assert.equal(early?.status, undefined, "answered without checking the password");
  held.releaseNext();
  assert.equal((await again).status, 303);
});

test("queued sign-ins start their derivations in the order they arrived, and each is answered", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const passwords = ["guess-a", "guess-b", user.password, "guess-d"];
  const responses: Promise<Response>[] = [];
  for (const [i, password] of passwords.entries()) {
    const { browser, fields } = await readyBrowser(t, `203.0.113.${i + 1}`);
    // One username may wait in only a share of the queue: the guesses name other users.
    const username = password === user.password ? user.username : `someone-${i}@example.com`;
    responses.push(browser.post("/signin", { ...fields, username, password }));
    // Each waits in the queue (or runs) before the next is sent, so arrival order is known.
    await until(() => t.app.deps.passwordWork.load().running + t.app.deps.passwordWork.load().waiting === i + 1);
  }
  for (let i = 0; i < passwords.length; i++) {
    await held.startedAtLeast(i + 1);
    assert.deepEqual(held.started, passwords.slice(0, i + 1), "one derivation at a time, in arrival order");
    held.releaseNext();
  }
  assert.deepEqual((await Promise.all(responses)).map((r) => r.status), [400, 400, 303, 400]);
});

test("with a password derivation held in flight, GET /signin is answered, its CSRF token signed by the injected HMAC", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const hmac = t.app.deps.hmac;
  const keys: string[] = [];
  t.app.deps.hmac = (key, message) => (keys.push(key), hmac(key, message));
  const { browser, fields } = await readyBrowser(t, "192.0.2.10");
  const signingIn = browser.post("/signin", { ...fields, username: user.username, password: user.password });
  await held.startedAtLeast(1);
  const other = testBrowser(t.app, { clientIp: "192.0.2.11" });
  const form = await other.get("/signin");
  assert.equal(form.status, 200);
  assert.ok(formFields(await form.text(), "/signin").csrf);
  assert.ok(keys.includes(other.cookies.get("fieldgate_presession")!), "the token was signed through deps.hmac");
  held.releaseNext();
  assert.equal((await signingIn).status, 303);
});

test("FIELDGATE_PASSWORD_CONCURRENCY lets that many derivations run at once", async () => {
  const t = await openTestApp({ FIELDGATE_PASSWORD_CONCURRENCY: "2" });
  const user = await t.seed.user();
  const held = holdDerivations(t.app);
  const responses = await Promise.all([1, 2].map((i) => readyBrowser(t, `192.0.2.${i}`)))
    .then((ready) => ready.map(({ browser, fields }) => browser.post("/signin", { ...fields, username: user.username, password: "x" })));
  await held.startedAtLeast(2);
  assert.deepEqual(t.app.deps.passwordWork.load(), { running: 2, waiting: 0 });
  held.releaseNext();
  held.releaseNext();
  assert.deepEqual((await Promise.all(responses)).map((r) => r.status), [400, 400]);
});

/** Counts the PBKDF2 derivations the app starts from now on. */
function countDerivations(t: TestApp): () => number {
  let count = 0;
  const pbkdf2 = t.app.deps.pbkdf2;
  t.app.deps.pbkdf2 = (password, salt, iterations) => (count++, pbkdf2(password, salt, iterations));
  return () => count;
}

test("successful sign-ins of one user are limited per minute from any address: 429 page, no password checked", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  for (let i = 0; i < t.config.signInLimit; i++) {
    assert.equal((await signIn(testBrowser(t.app, { clientIp: `198.51.100.${i + 1}` }), user)).status, 303, `sign-in ${i}`);
  }
  const derivations = countDerivations(t);
  const refused = await signIn(testBrowser(t.app, { clientIp: "203.0.113.99" }), user);
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get("content-type") ?? "", /^text\/html/);
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  assert.match(await refused.text(), /Too many sign-ins/);
  assert.equal(derivations(), 0, "refused before the password was derived");
  const throttled = t.log.filter((l) => l.event === "audit.throttled");
  assert.deepEqual(throttled.map((l) => l.fields.surface), ["sign_in_successes"], "audited once, when reached");
  t.clock.advance(60);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "203.0.113.99" }), user)).status, 303, "the minute passes");
});

test("successful sign-ins from one address are limited across users; another address is not held back", async () => {
  const t = await openTestApp({ FIELDGATE_SIGNIN_LIMIT: "1" });
  const office = "198.51.100.50";
  for (let i = 0; i < SHARED_KEY_FACTOR; i++) {
    assert.equal((await signIn(testBrowser(t.app, { clientIp: office }), await t.seed.user())).status, 303, `user ${i}`);
  }
  const next = await t.seed.user();
  assert.equal((await signIn(testBrowser(t.app, { clientIp: office }), next)).status, 429);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "203.0.113.7" }), next)).status, 303);
});

test("a sign-in beyond FIELDGATE_MAX_SESSIONS ends the user's oldest session, not the newer ones", async () => {
  const t = await openTestApp({ FIELDGATE_MAX_SESSIONS: "2" });
  const user = await t.seed.user();
  const browsers = [1, 2, 3].map((i) => testBrowser(t.app, { clientIp: `192.0.2.${i}` }));
  for (const browser of browsers) {
    assert.equal((await signIn(browser, user)).status, 303);
    t.clock.advance(1);
  }
  const statuses = await Promise.all(browsers.map(async (b) => (await b.get("/account")).status));
  assert.deepEqual(statuses, [303, 200, 200], "the first browser is sent to sign in again");
});

test("an imported bcrypt digest costs its check and one derivation, wrong password or right (then the rehash)", async () => {
  const t = await openTestApp();
  const user = await t.seed.user({ password: "unused at first" });
  assert.ok(await t.store.users.updatePasswordHash(user.id, DIGESTS.alice, { replacing: user.passwordHash ?? "" }));
  const derivations = countDerivations(t);
  const wrong = await signIn(testBrowser(t.app, { clientIp: "198.51.100.1" }), { username: user.username, password: "nope" });
  assert.equal(wrong.status, 400);
  assert.equal(derivations(), 1, "the padding after a failed bcrypt check, as an unknown username costs");
  const right = await signIn(testBrowser(t.app, { clientIp: "198.51.100.1" }), { username: user.username, password: PLAIN.alicePassword });
  assert.equal(right.status, 303);
  assert.equal(derivations(), 2, "one more PBKDF2 run: the rehash");
  assert.match((await t.store.users.findById(user.id))?.passwordHash ?? "", /^pbkdf2-sha256\$/);
});
