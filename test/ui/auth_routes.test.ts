import { test } from "../helpers/bounded.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { authorizePath, formFields, signIn, testBrowser } from "../helpers/browser_session.ts";
import { postForm } from "../helpers/requests.ts";
import { hashPassword, passwordIterations, sha256Hex } from "../../src/crypto/hash.ts";
import { safeNext } from "../../src/ui/auth_routes.ts";

async function signInForm(browser: ReturnType<typeof testBrowser>, next = "/account") {
  const res = await browser.get(`/signin?next=${encodeURIComponent(next)}`);
  assert.equal(res.status, 200);
  return formFields(await res.text(), "/signin");
}

test("sign-in sets an HttpOnly SameSite=Lax session cookie and redirects 303 to next", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const res = await signIn(browser, user, "/account");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("fieldgate_session="));
  assert.ok(cookie);
  assert.match(cookie, /; HttpOnly/);
  assert.match(cookie, /; SameSite=Lax/);
  assert.match(cookie, /; Path=\//);
  assert.match(cookie, new RegExp(`; Max-Age=${t.config.sessionTtlSeconds}`));
  assert.doesNotMatch(cookie, /Secure/);
  assert.equal(browser.cookies.has("fieldgate_presession"), false, "the pre-session cookie is cleared");
  assert.ok(t.log.some((l) => l.event === "audit.sign_in_succeeded"));
});

test("on https the session cookie is Secure and __Host- prefixed", async () => {
  const t = await openTestApp({ FIELDGATE_BASE_URL: "https://fieldgate.test" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const res = await signIn(browser, user);
  assert.equal(res.status, 303);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-fieldgate_session="));
  assert.ok(cookie);
  assert.match(cookie, /; Secure/);
  assert.match(cookie, /; Path=\//);
  assert.doesNotMatch(cookie, /Domain=/i);
});

test("the session is stored only as a digest of the cookie value", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const value = browser.cookies.get("fieldgate_session")!;
  assert.match(value, /^fgss_/);
  assert.ok(await t.store.sessions.findActive(await sha256Hex(value), t.clock.nowSeconds()));
  assert.equal(await t.store.sessions.findActive(value, t.clock.nowSeconds()), undefined);
});

test("sign-in rotates the session id: a session cookie planted before sign-in stops working", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const planter = testBrowser(t.app);
  await signIn(planter, user);
  const planted = planter.cookies.get("fieldgate_session")!;
  const victim = testBrowser(t.app);
  const fields = await signInForm(victim);
  victim.cookies.set("fieldgate_session", planted);
  const res = await victim.post("/signin", { ...fields, username: user.username, password: user.password });
  assert.equal(res.status, 303);
  const after = victim.cookies.get("fieldgate_session")!;
  assert.notEqual(after, planted);
  assert.equal(await t.store.sessions.findActive(await sha256Hex(planted), t.clock.nowSeconds()), undefined);
  assert.ok(await t.store.sessions.findActive(await sha256Hex(after), t.clock.nowSeconds()));
});

// Every failure gives the same generic message and status, without redirect (no account enumeration).
const failures: Array<{ name: string; setup: (t: TestApp) => Promise<{ username: string; password: string }> }> = [
  { name: "an unknown user", setup: async () => ({ username: "nobody@example.com", password: "whatever" }) },
  { name: "a wrong password", setup: async (t) => ({ username: (await t.seed.user()).username, password: "wrong" }) },
  { name: "an empty password", setup: async (t) => ({ username: (await t.seed.user()).username, password: "" }) },
  { name: "an empty username", setup: async () => ({ username: "", password: "x" }) },
  { name: "an integration user", setup: async (t) => ({ username: (await t.seed.integrationUser()).username, password: "" }) },
  {
    name: "a disabled user with the right password",
    setup: async (t) => {
      const user = await t.seed.user();
      await t.store.users.setDisabled(user.id, true);
      return user;
    },
  },
];

for (const row of failures) {
  test(`sign-in with ${row.name} shows the generic error with no session`, async () => {
    const t = await openTestApp();
    const credentials = await row.setup(t);
    const browser = testBrowser(t.app);
    const res = await signIn(browser, credentials);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("location"), null);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const body = await res.text();
    assert.match(body, /Incorrect username or password/);
    assert.equal(browser.cookies.has("fieldgate_session"), false);
    assert.ok(t.log.some((l) => l.event === "audit.sign_in_failed"));
  });
}

test("sign-in failures are throttled per username from one address, with 429 and Retry-After", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3", FIELDGATE_THROTTLE_WINDOW: "60" });
  const user = await t.seed.user({ username: "Alice@example.com" });
  const browser = testBrowser(t.app, { clientIp: "198.51.100.7" });
  for (let i = 0; i < 3; i++) {
    assert.equal((await signIn(browser, { username: "alice@EXAMPLE.com", password: "wrong" })).status, 400);
  }
  const blocked = await signIn(browser, user);
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get("retry-after")) > 0);
  assert.match(blocked.headers.get("content-type") ?? "", /^text\/html/);
  await signIn(browser, user);
  assert.equal(t.log.filter((l) => l.event === "audit.throttled").length, 1, "the lockout is audited once");
  t.clock.advance(61);
  assert.equal((await signIn(browser, user)).status, 303);
});

test("someone else's wrong passwords do not lock a person out from their own address", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const user = await t.seed.user({ username: "alice@example.com" });
  const attacker = testBrowser(t.app, { clientIp: "203.0.113.66" });
  for (let i = 0; i < 10; i++) await signIn(attacker, { username: user.username, password: "wrong" });
  assert.equal((await signIn(attacker, user)).status, 429, "the attacker's own address is locked");
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "198.51.100.20" }), user)).status, 303);
});

test("guesses at one username spread over many addresses still meet the username's shared limit", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const user = await t.seed.user({ username: "alice@example.com" });
  for (let i = 0; i < 3 * SHARED_KEY_FACTOR; i++) {
    await signIn(testBrowser(t.app, { clientIp: `10.0.${i >> 8}.${i & 255}` }), { username: user.username, password: "wrong" });
  }
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "198.51.100.21" }), user)).status, 429);
});

test("sign-in failures are throttled per address across usernames", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app, { clientIp: "203.0.113.7" });
  // The address key is shared (NAT): it tolerates SHARED_KEY_FACTOR times the per-username limit.
  for (let i = 0; i < 3 * SHARED_KEY_FACTOR; i++) await signIn(browser, { username: `guess${i}@example.com`, password: "x" });
  assert.equal((await signIn(browser, user)).status, 429);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "203.0.113.8" }), user)).status, 303);
});

// Usernames longer than any account can have (254) fail generically without a lookup and get no throttle key of
// their own: a key embedding a 60 KB name would cost that much memory, per key.
for (const length of [255, 60_000]) {
  test(`a ${length}-character username fails generically, looks nobody up and adds no throttle key`, async () => {
    const t = await openTestApp();
    const user = await t.seed.user({ username: "a".repeat(length) });
    const browser = testBrowser(t.app, { clientIp: "198.51.100.20" });
    const res = await signIn(browser, user);
    assert.equal(res.status, 400);
    const body = await res.text();
    assert.match(body, /Incorrect username or password/);
    assert.ok(!body.includes("a".repeat(255)), "the overlong name is not echoed");
    assert.equal(browser.cookies.has("fieldgate_session"), false);
    assert.equal(await t.app.deps.throttle.size(), 1, "only the address key");
    assert.ok(t.log.some((l) => l.event === "audit.sign_in_failed"));
  });
}

test("a 254-character username is still looked up and throttled under its own lowercased key", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "2" });
  const user = await t.seed.user({ username: `${"b".repeat(242)}@example.com` });
  assert.equal(user.username.length, 254);
  for (const ip of ["198.51.100.30", "198.51.100.31", "198.51.100.31"]) {
    await signIn(testBrowser(t.app, { clientIp: ip }), { username: user.username.toUpperCase(), password: "wrong" });
  }
  // The username from each address (2), the username from anywhere (1), each address (2).
  assert.equal(await t.app.deps.throttle.size(), 5);
  const again = testBrowser(t.app, { clientIp: "198.51.100.31" });
  assert.equal((await signIn(again, user)).status, 429, "the lowercased name's key from that address is locked");
});

test("the sign-in form takes usernames as long as the CLI registers (254), not fewer", async () => {
  const t = await openTestApp();
  const page = await (await testBrowser(t.app).get("/signin")).text();
  assert.match(page, /<input id="username"[^>]*\smaxlength="254"/);
});

test("overlong usernames still count against the address key", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app, { clientIp: "203.0.113.40" });
  for (let i = 0; i < 3 * SHARED_KEY_FACTOR; i++) {
    assert.equal((await signIn(browser, { username: `${i}${"x".repeat(1_000)}`, password: "x" })).status, 400);
  }
  assert.equal((await signIn(browser, user)).status, 429);
  assert.equal(await t.app.deps.throttle.size(), 1);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "203.0.113.41" }), user)).status, 303);
});

test("sign-in failures from one IPv6 /64 share one address key; another /64 is not locked out", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  const user = await t.seed.user();
  for (let i = 0; i < 3 * SHARED_KEY_FACTOR; i++) {
    const browser = testBrowser(t.app, { clientIp: `2001:db8:1:2::${(i + 1).toString(16)}` });
    await signIn(browser, { username: `guess${i}@example.com`, password: "x" });
  }
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "2001:db8:1:2:ffff::1" }), user)).status, 429);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "2001:db8:1:3::1" }), user)).status, 303);
});

test("sign-in upgrades a password hash made with fewer iterations than configured", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const weak = await hashPassword(user.password, { iterations: 10, random: t.app.deps.random });
  await t.store.users.replacePassword(user.id, weak);
  assert.equal((await signIn(testBrowser(t.app), user)).status, 303);
  const stored = (await t.store.users.findById(user.id))!.passwordHash!;
  assert.equal(passwordIterations(stored), t.config.pbkdf2Iterations);
  assert.equal((await signIn(testBrowser(t.app), user)).status, 303, "the upgraded hash still verifies");
});

/** Counts the PBKDF2 iterations the app spends from now on (no timing: the suite asserts no durations). */
function countIterations(t: TestApp): () => number {
  let spent = 0;
  const pbkdf2 = t.app.deps.pbkdf2;
  t.app.deps.pbkdf2 = (password, salt, iterations) => {
    spent += iterations;
    return pbkdf2(password, salt, iterations);
  };
  return () => spent;
}

/** A bcrypt digest (cost 4) of "four rounds only", as an import from Doorkeeper's host application stores it. */
const IMPORTED_BCRYPT = "$2b$04$r39fg.qTAlyxdOv39spsh.0fRNULhXDcOtHormXWNwnyuwK8eWcn2";

// Every failure costs at least the configured count (1000 here), like an unknown username's check against the dummy
// hash: hashes are upgraded only at a successful sign-in, so one made before the setting was raised answered a wrong
// password faster, showing that the account exists. An imported bcrypt digest is checked by deps.bcrypt and then
// padded by a whole derivation: at cost 4 its check alone answered in milliseconds.
const failureCosts: Array<{ name: string; stored?: number | string; kind?: "disabled" | "integration" }> = [
  { name: "an unknown username" },
  { name: "a user whose hash has the configured count", stored: 1000 },
  { name: "a user whose hash predates a raised setting (10 iterations)", stored: 10 },
  { name: "a user whose hash has one iteration fewer than configured", stored: 999 },
  { name: "a disabled user with an old hash", stored: 10, kind: "disabled" },
  { name: "an integration user", kind: "integration" },
  { name: "a user with an imported bcrypt digest (cost 4)", stored: IMPORTED_BCRYPT },
  { name: "a user with a bcrypt digest fieldgate will not verify (cost 15)", stored: IMPORTED_BCRYPT.replace("$04$", "$15$") },
];

/** The stored hash a failureCosts row names: a PBKDF2 hash of that many iterations, or the digest itself. */
async function storedHash(t: TestApp, password: string, stored: number | string): Promise<string> {
  if (typeof stored === "string") return stored;
  return await hashPassword(password, { iterations: stored, random: t.app.deps.random });
}

/** Counts the checks the app sends to deps.bcrypt from now on. */
function countBcryptChecks(t: TestApp): () => number {
  let checks = 0;
  const bcrypt = t.app.deps.bcrypt;
  t.app.deps.bcrypt = (password, digest) => (checks++, bcrypt(password, digest));
  return () => checks;
}

for (const row of failureCosts) {
  test(`a wrong password for ${row.name} spends the configured PBKDF2 iterations`, async () => {
    const t = await openTestApp();
    const username = "alice@example.com";
    if (row.kind === "integration") await t.seed.integrationUser({ username });
    if (row.stored !== undefined) {
      const user = await t.seed.user({ username });
      await t.store.users.replacePassword(user.id, await storedHash(t, user.password, row.stored));
      if (row.kind === "disabled") await t.store.users.setDisabled(user.id, true);
    }
    const browser = testBrowser(t.app);
    const fields = await signInForm(browser);
    const spent = countIterations(t);
    const bcryptChecks = countBcryptChecks(t);
    const res = await browser.post("/signin", { ...fields, username, password: "not the password" });
    assert.equal(res.status, 400);
    assert.equal(spent(), t.config.pbkdf2Iterations);
    assert.equal(bcryptChecks(), typeof row.stored === "string" ? 1 : 0);
  });
}

// Lowering the setting never weakens a stored hash; what remains is documented in docs/security.md#passwords: a wrong password for
// such an account costs its own, higher count.
test("a hash with more iterations than configured is kept at sign-in, and a wrong password costs its own count", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const strong = await hashPassword(user.password, { iterations: 5000, random: t.app.deps.random });
  await t.store.users.replacePassword(user.id, strong);
  const spent = countIterations(t);
  assert.equal((await signIn(testBrowser(t.app), { username: user.username, password: "not the password" })).status, 400);
  assert.equal(spent(), 5000);
  assert.equal((await signIn(testBrowser(t.app), user)).status, 303);
  assert.equal((await t.store.users.findById(user.id))!.passwordHash, strong);
});

// An admin's `users set-password` or `users disable` lands while a sign-in with the old password is being checked
// (PBKDF2 takes long enough): the lookup below returns the user as it was, then the admin's change commits.
for (const change of ["set-password", "disable"] as const) {
  for (const weak of [false, true]) {
    test(`a sign-in in flight when an admin runs ${change}${weak ? " (stored hash due an upgrade)" : ""} gets no session`, async () => {
      const t = await openTestApp();
      const user = await t.seed.user();
      if (weak) await t.store.users.replacePassword(user.id, await hashPassword(user.password, { iterations: 10, random: t.app.deps.random }));
      const newHash = await hashPassword("the admin's new password", { iterations: 1000, random: t.app.deps.random });
      const lookup = t.store.users.findByUsername.bind(t.store.users);
      t.store.users.findByUsername = async (username) => {
        const found = await lookup(username);
        if (change === "set-password") await t.store.users.replacePassword(found!.id, newHash);
        else await t.store.users.setDisabled(found!.id, true);
        return found;
      };
      const res = await signIn(testBrowser(t.app), user);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("set-cookie")?.includes("fieldgate_session=") ?? false, false);
      t.store.users.findByUsername = lookup;
      // The admin's password stands: the upgrade of the old one did not overwrite it.
      const stored = (await t.store.users.findById(user.id))!.passwordHash!;
      if (change === "set-password") assert.equal(stored, newHash);
      assert.ok(t.log.some((l) => l.event === "audit.sign_in_failed"));
      assert.ok(!t.log.some((l) => l.event === "audit.sign_in_succeeded"));
    });
  }
}

test("two sign-ins at once that both upgrade the same stored hash both succeed (a double-clicked button)", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  await t.store.users.replacePassword(user.id, await hashPassword(user.password, { iterations: 10, random: t.app.deps.random }));
  const statuses = await Promise.all([signIn(testBrowser(t.app), user), signIn(testBrowser(t.app), user)]).then((r) => r.map((x) => x.status));
  assert.deepEqual(statuses, [303, 303]);
  assert.equal(passwordIterations((await t.store.users.findById(user.id))!.passwordHash!), t.config.pbkdf2Iterations);
});

// The sign-in form's CSRF token is bound to the pre-session cookie (double submit, HMAC keyed by the cookie). A form
// without a valid token signs nobody in; it comes back with a new pre-session and token instead of a dead end.
const csrfRows: Array<{ name: string; cookieKept: boolean; tamper: (f: Record<string, string>, b: ReturnType<typeof testBrowser>) => Record<string, string> }> = [
  { name: "no CSRF token", cookieKept: true, tamper: ({ csrf: _, ...f }) => f },
  { name: "a wrong CSRF token", cookieKept: true, tamper: (f) => ({ ...f, csrf: "A".repeat(43) }) },
  { name: "no pre-session cookie", cookieKept: false, tamper: (f, b) => (b.cookies.clear(), f) },
];

for (const row of csrfRows) {
  test(`sign-in POST with ${row.name} signs nobody in and shows the form again with a new token`, async () => {
    const t = await openTestApp();
    const { clientId } = await t.seed.client({ name: "Field notes app" });
    const user = await t.seed.user();
    const browser = testBrowser(t.app);
    const next = `/oauth/authorize?client_id=${clientId}&response_type=code`;
    const fields = await signInForm(browser, next);
    const oldPre = browser.cookies.get("fieldgate_presession");
    const res = await browser.post("/signin", { ...row.tamper(fields, browser), username: user.username, password: user.password });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("location"), null);
    assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
    assert.match(res.headers.get("content-security-policy") ?? "", /form-action 'self' https:\/\/client\.example;/);
    assert.equal(browser.cookies.has("fieldgate_session"), false);
    assert.ok(!t.log.some((l) => l.event === "audit.sign_in_succeeded"));
    assert.equal(await t.app.deps.throttle.size(), 0, "no password was checked, so no attempt counts");
    const body = await res.text();
    assert.match(body, /Your sign-in form timed out; enter your password again/);
    assert.equal(/needs cookies to sign you in: if this happens again, allow cookies for fieldgate\.test/.test(body), !row.cookieKept);
    assert.match(body, /<strong>Field notes app<\/strong> wants to access/);
    assert.ok(!body.includes(user.password), "the password is never echoed");
    const again = formFields(body, "/signin");
    assert.equal(again.next, next);
    assert.match(body, new RegExp(`id="username"[^>]*value="${user.username.replace(/[.]/g, "\\.")}"`));
    const newPre = browser.cookies.get("fieldgate_presession");
    assert.ok(newPre, "a pre-session cookie is planted");
    assert.notEqual(newPre, oldPre, "a new one");
    // The new form works, and its token is checked like any other.
    const forged = await browser.post("/signin", { ...again, csrf: fields.csrf ?? "x", username: user.username, password: user.password });
    assert.equal(forged.status, 400, "the token of the form that failed is no good with the new cookie");
    assert.equal(browser.cookies.has("fieldgate_session"), false);
    const third = formFields(await forged.text(), "/signin");
    const signedIn = await browser.post("/signin", { ...third, username: user.username, password: user.password });
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.get("location"), next);
    assert.ok(browser.cookies.has("fieldgate_session"));
  });
}

test("a stale sign-in form from a browser that has since signed in (a second tab) goes on to next", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  const tabB = await signInForm(browser, "/account?from=tab-b");
  assert.equal((await signIn(browser, user)).status, 303, "tab A signs in");
  const session = browser.cookies.get("fieldgate_session");
  browser.cookies.delete("fieldgate_presession");
  const res = await browser.post("/signin", { ...tabB, username: user.username, password: "not even the right one" });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account?from=tab-b");
  assert.equal(browser.cookies.get("fieldgate_session"), session, "the session is the one tab A started");
  assert.ok(!t.log.some((l) => l.event === "audit.sign_in_failed"), "no password was checked");
});

test("a stale sign-in form while signed in goes only to a safe next", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example"]) {
    const res = await browser.post("/signin", { next, csrf: "stale", username: user.username, password: "x" });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/account", next);
  }
});

test("a sign-in token from one browser does not work with another browser's cookie", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const first = await signInForm(testBrowser(t.app));
  const other = testBrowser(t.app);
  await signInForm(other);
  const res = await other.post("/signin", { ...first, username: user.username, password: user.password });
  assert.equal(res.status, 400);
  assert.equal(other.cookies.has("fieldgate_session"), false);
  assert.match(await res.text(), /timed out/);
});

test("after a wrong password the page title says Error, both inputs point at the error and the password has focus", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const body = await (await signIn(testBrowser(t.app), { username: user.username, password: "wrong" })).text();
  assert.match(body, /<title>Error: Sign in · fieldgate<\/title>/);
  assert.match(body, /<p class="error" role="alert" id="signin-error">Incorrect username or password<\/p>/);
  for (const id of ["username", "password"]) {
    const input = body.match(new RegExp(`<input id="${id}"[^>]*>`))?.[0] ?? "";
    assert.match(input, /aria-invalid="true"/, id);
    assert.match(input, /aria-describedby="signin-error"/, id);
  }
  assert.match(body, /<input id="password"[^>]* autofocus>/);
  assert.doesNotMatch(body, /<input id="username"[^>]* autofocus/);
});

test("after a failure with an empty username the username gets focus", async () => {
  const t = await openTestApp();
  const body = await (await signIn(testBrowser(t.app), { username: "", password: "x" })).text();
  assert.match(body, /<input id="username"[^>]* autofocus>/);
  assert.doesNotMatch(body, /<input id="password"[^>]* autofocus/);
});

test("the plain sign-in page has no error state", async () => {
  const t = await openTestApp();
  const body = await (await testBrowser(t.app).get("/signin")).text();
  assert.match(body, /<title>Sign in · fieldgate<\/title>/);
  assert.doesNotMatch(body, /aria-invalid|aria-describedby|autofocus|role="alert"/);
});

test("a timed-out form is an error but does not mark the inputs invalid", async () => {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  const fields = await signInForm(browser);
  const body = await (await browser.post("/signin", { ...fields, csrf: "x", username: "ada", password: "x" })).text();
  assert.match(body, /<title>Error: Sign in · fieldgate<\/title>/);
  assert.doesNotMatch(body, /aria-invalid/);
  assert.match(body, /<input id="password"[^>]*aria-describedby="signin-error" autofocus>/);
});

test("a throttled sign-in shows the form again with status 429, Retry-After and how long to wait", async () => {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "1", FIELDGATE_THROTTLE_WINDOW: "60" });
  const user = await t.seed.user();
  const { clientId } = await t.seed.client({ name: "Field notes app" });
  const next = `/oauth/authorize?client_id=${clientId}`;
  await signIn(testBrowser(t.app), { username: user.username, password: "wrong" }, next);
  const browser = testBrowser(t.app);
  const res = await signIn(browser, user, next);
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "60");
  assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  const body = await res.text();
  assert.match(body, /Too many failed attempts\. Try again in about a minute/);
  assert.match(body, /Field notes app/);
  assert.equal(formFields(body, "/signin").next, next);
  assert.equal(browser.cookies.has("fieldgate_session"), false);
});

test("GET /signin?session=ended says the session had ended; other values say nothing", async () => {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  assert.match(await (await browser.get("/signin?next=%2Faccount&session=ended")).text(), /Your session had ended, so nothing was changed/);
  for (const query of ["session=other", "session=%3Cb%3E", ""]) {
    assert.doesNotMatch(await (await browser.get(`/signin?${query}`)).text(), /session had ended|role="status"/, query);
  }
});

const nextRows: Array<[string | undefined, string]> = [
  ["/oauth/authorize?client_id=x", "/oauth/authorize?client_id=x"],
  ["/account", "/account"],
  [undefined, "/account"],
  ["https://evil.example/", "/account"],
  ["//evil.example/", "/account"],
  ["/\\evil.example/", "/account"],
  ["/ok\r\nSet-Cookie: x", "/account"],
  ["javascript:alert(1)", "/account"],
  ["/\u0100x", "/%C4%80x"],
  ["/\ud800", "/%EF%BF%BD"],
  ["/x?q=\u00e9 '", "/x?q=%C3%A9%20%27"],
  ["/x#fragment", "/x"],
  ["/.//evil.example", "/account"],
  ["/a/../..//evil.example", "/account"],
  ["/\t/evil.example", "/account"],
  ["/\u007f", "/account"],
];

for (const [next, expected] of nextRows) {
  test(`the post-sign-in target ${JSON.stringify(next)} becomes ${expected}`, () => {
    assert.equal(safeNext(next), expected);
  });
}

test("sign-out needs the CSRF token, then deletes the session and clears the cookie", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const value = browser.cookies.get("fieldgate_session")!;
  const page = await (await browser.get("/account")).text();
  const refused = await browser.post("/signout", { csrf: "forged" });
  assert.equal(refused.status, 403);
  assert.ok(await t.store.sessions.findActive(await sha256Hex(value), t.clock.nowSeconds()));
  const res = await browser.post("/signout", formFields(page, "/signout"));
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/?signed_out=1");
  assert.equal(browser.cookies.has("fieldgate_session"), false);
  assert.equal(await t.store.sessions.findActive(await sha256Hex(value), t.clock.nowSeconds()), undefined);
  assert.ok(t.log.some((l) => l.event === "audit.signed_out"));
});

test("signing out on the consent page keeps the authorization request: the sign-in page for that application", async () => {
  const t = await openTestApp();
  const { clientId } = await t.seed.client({ name: "Field notes app" });
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const request = authorizePath(clientId, { state: "s p&ce", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256" });
  const consent = await (await browser.get(request)).text();
  const signOut = formFields(consent, "/signout");
  assert.equal(signOut.next, `/oauth/authorize?${new URL(request, "http://x").searchParams}`);
  const res = await browser.post("/signout", signOut);
  assert.equal(res.status, 303);
  const location = res.headers.get("location")!;
  assert.deepEqual(
    Object.fromEntries(new URL(location, "http://x").searchParams),
    Object.fromEntries(new URL(request, "http://x").searchParams),
    "the same authorization request",
  );
  assert.equal(browser.cookies.has("fieldgate_session"), false);
  const signInPage = await browser.get(location);
  assert.equal(signInPage.status, 200);
  const body = await signInPage.text();
  assert.match(body, /<strong>Field notes app<\/strong> wants to access your fieldgate account/);
  // Someone else signs in and is asked for their own consent: nothing was approved on the first user's behalf.
  const other = await t.seed.user();
  const again = await browser.post("/signin", { ...formFields(body, "/signin"), username: other.username, password: other.password });
  assert.equal(again.status, 303);
  const consentAgain = await browser.get(again.headers.get("location")!);
  assert.equal(consentAgain.status, 200);
  assert.match(await consentAgain.text(), /Approve/);
});

const signOutTargets: Array<[string | undefined, string]> = [
  [undefined, "/?signed_out=1"],
  ["/oauth/authorize?client_id=x", "/oauth/authorize?client_id=x"],
  ["https://evil.example/", "/?signed_out=1"],
  ["//evil.example/", "/?signed_out=1"],
  ["/\\evil.example", "/?signed_out=1"],
  ["/.//evil.example", "/?signed_out=1"],
  ["/\t/evil.example", "/?signed_out=1"],
];

for (const [next, expected] of signOutTargets) {
  test(`sign-out with next=${JSON.stringify(next)} goes to ${expected}`, async () => {
    const t = await openTestApp();
    const browser = testBrowser(t.app);
    await signIn(browser, await t.seed.user());
    const fields = formFields(await (await browser.get("/account")).text(), "/signout");
    const res = await browser.post("/signout", { ...fields, ...(next === undefined ? {} : { next }) });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), expected);
    assert.equal(browser.cookies.has("fieldgate_session"), false);
  });
}

test("sign-out with a next still needs the CSRF token", async () => {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const res = await browser.post("/signout", { csrf: "forged", next: "/oauth/authorize?client_id=x" });
  assert.equal(res.status, 403);
  assert.ok(browser.cookies.has("fieldgate_session"));
});

// Another site's form POST to /signout: a browser sends no SameSite=Lax cookie with it, so no session is found. It
// must not answer with Set-Cookie headers clearing the session and demo cookies, which the browser would apply.
test("a sign-out without a session cookie (another site's form) ends nothing and clears no cookie", async () => {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const value = browser.cookies.get("fieldgate_session")!;
  const res = await t.app.fetch(postForm("/signout", { next: "/account" }), { remoteAddress: "192.0.2.1" });
  assert.equal(res.status, 303);
  assert.deepEqual(res.headers.getSetCookie(), []);
  assert.ok(await t.store.sessions.findActive(await sha256Hex(value), t.clock.nowSeconds()));
  assert.ok(!t.log.some((l) => l.event === "audit.signed_out"));
});

const foreignSignOuts: Array<{ name: string; headers: Record<string, string> }> = [
  { name: "Sec-Fetch-Site: cross-site", headers: { "sec-fetch-site": "cross-site" } },
  { name: "another site's Origin", headers: { origin: "https://evil.example" } },
  { name: "the base URL's host over https", headers: { origin: "https://fieldgate.test" } },
];

for (const row of foreignSignOuts) {
  test(`a sign-out with ${row.name} is refused with an HTML page, even with the cookie and token`, async () => {
    const t = await openTestApp();
    const browser = testBrowser(t.app);
    await signIn(browser, await t.seed.user());
    const value = browser.cookies.get("fieldgate_session")!;
    const fields = formFields(await (await browser.get("/account")).text(), "/signout");
    const res = await browser.post("/signout", fields, row.headers);
    assert.equal(res.status, 403);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(res.headers.get("x-frame-options"), "DENY");
    assert.deepEqual(res.headers.getSetCookie(), []);
    assert.ok(await t.store.sessions.findActive(await sha256Hex(value), t.clock.nowSeconds()));
  });
}

// Chromium sends Origin: null on our own forms (Referrer-Policy: no-referrer), so it must not count as another site.
const ownPages: Array<Record<string, string>> = [{ origin: "null", "sec-fetch-site": "same-origin" }, { origin: "http://fieldgate.test" }];
for (const headers of ownPages) {
  test(`sign-out from our own page with Origin: ${headers.origin} signs out`, async () => {
    const t = await openTestApp();
    const browser = testBrowser(t.app);
    await signIn(browser, await t.seed.user());
    const fields = formFields(await (await browser.get("/account")).text(), "/signout");
    const res = await browser.post("/signout", fields, headers);
    assert.equal(res.status, 303);
    assert.equal(browser.cookies.has("fieldgate_session"), false);
  });
}

test("sign-out after the session ended while the page was open still clears its cookie, with its token only", async () => {
  const t = await openTestApp({ FIELDGATE_SESSION_TTL: "60" });
  const browser = testBrowser(t.app);
  await signIn(browser, await t.seed.user());
  const fields = formFields(await (await browser.get("/account")).text(), "/signout");
  t.clock.advance(61);
  assert.equal((await browser.post("/signout", { ...fields, csrf: "forged" })).status, 403);
  assert.ok(browser.cookies.has("fieldgate_session"));
  const res = await browser.post("/signout", fields);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/?signed_out=1");
  assert.equal(browser.cookies.has("fieldgate_session"), false);
  assert.ok(!t.log.some((l) => l.event === "audit.signed_out"), "no session was active to end");
});

test("GET /signin while signed in goes straight to next", async () => {
  const t = await openTestApp();
  const user = await t.seed.user();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const res = await browser.get("/signin?next=%2Faccount");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
});

test("the sign-in page escapes a reflected username and carries the page security headers", async () => {
  const t = await openTestApp();
  const browser = testBrowser(t.app);
  const fields = await signInForm(browser);
  const res = await browser.post("/signin", { ...fields, username: '"><script>alert(1)</script>', password: "x" });
  const body = await res.text();
  assert.doesNotMatch(body, /<script>/);
  assert.match(body, /&lt;script&gt;/);
  assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  assert.equal(res.headers.get("cache-control"), "no-store");
});
