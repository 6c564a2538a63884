import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { SHARED_KEY_FACTOR } from "../../src/http/throttle.ts";
import { hashPassword } from "../../src/crypto/hash.ts";
import { DEVICE_TTL_SECONDS } from "../../src/ui/device.ts";

const MAX = 3;

function app(env: Record<string, string> = {}): Promise<TestApp> {
  return openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: String(MAX), ...env });
}

/** A browser that signed in as `user` and signed out again: it keeps only its device cookie. */
async function signedInBefore(t: TestApp, user: { username: string; password: string }): Promise<TestBrowser> {
  const browser = testBrowser(t.app, { clientIp: "198.51.100.77" });
  assert.equal((await signIn(browser, user)).status, 303);
  assert.equal((await browser.post("/signout", formFields(await (await browser.get("/account")).text(), "/signout"))).status, 303);
  assert.ok(browser.cookies.has("fieldgate_device"), "sign-out leaves the device cookie");
  return browser;
}

/** The same browser (its cookies) seen from another address. */
function from(browser: TestBrowser, t: TestApp, clientIp: string): TestBrowser {
  const moved = testBrowser(t.app, { clientIp });
  for (const [name, value] of browser.cookies) moved.cookies.set(name, value);
  return moved;
}

/** Wrong passwords for `username` from as many addresses as the username-wide key tolerates: it is locked now. */
async function lockUsername(t: TestApp, username: string): Promise<void> {
  for (let i = 0; i < MAX * SHARED_KEY_FACTOR; i++) {
    const res = await signIn(testBrowser(t.app, { clientIp: `10.0.${i >> 8}.${i & 255}` }), { username, password: "guess" });
    assert.equal(res.status, 400);
  }
  const stranger = await signIn(testBrowser(t.app, { clientIp: "203.0.113.200" }), { username, password: "guess" });
  assert.equal(stranger.status, 429, "the username is locked for browsers it does not know");
}

test("sign-in sets a long-lived HttpOnly SameSite=Lax device cookie", async () => {
  const t = await app();
  const res = await signIn(testBrowser(t.app), await t.seed.user());
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("fieldgate_device="));
  assert.ok(cookie);
  assert.match(cookie, /^fieldgate_device=fgdv_[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}; /);
  assert.match(cookie, new RegExp(`; Max-Age=${DEVICE_TTL_SECONDS}; HttpOnly; SameSite=Lax$`));
});

test("on https the device cookie is Secure and __Host- prefixed", async () => {
  const t = await app({ FIELDGATE_BASE_URL: "https://fieldgate.test" });
  const res = await signIn(testBrowser(t.app), await t.seed.user());
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-fieldgate_device="));
  assert.ok(cookie);
  assert.match(cookie, /; Path=\/; .*; Secure$/);
});

test("a failed sign-in sets no device cookie", async () => {
  const t = await app();
  const user = await t.seed.user();
  const res = await signIn(testBrowser(t.app), { username: user.username, password: "wrong" });
  assert.equal(res.status, 400);
  assert.ok(!res.headers.getSetCookie().some((c) => c.includes("fieldgate_device")));
});

test("with the username locked by failures from many addresses, a browser that signed in before still signs in", async () => {
  const t = await app();
  const user = await t.seed.user({ username: "alice@example.com" });
  const browser = await signedInBefore(t, user);
  await lockUsername(t, user.username);
  assert.equal((await signIn(testBrowser(t.app, { clientIp: "198.51.100.80" }), user)).status, 429, "an unknown browser is refused");
  const res = await signIn(from(browser, t, "198.51.100.81"), user);
  assert.equal(res.status, 303);
  assert.ok(t.log.some((l) => l.event === "audit.sign_in_succeeded"));
});

// Each row changes what the known browser presents; none of it may lift the username-wide lock.
const noExemption: Array<{ name: string; change: (t: TestApp, value: string, user: { id: number; password: string }) => Promise<string> }> = [
  {
    name: "a device cookie issued to another user",
    change: async (t) => (await signedInBefore(t, await t.seed.user())).cookies.get("fieldgate_device")!,
  },
  { name: "an altered MAC", change: async (_t, value) => value.slice(0, -2) + (value.endsWith("AA") ? "BB" : "AA") },
  { name: "an altered nonce", change: async (_t, value) => value.replace(/^fgdv_./, (m) => m.endsWith("A") ? "fgdv_B" : "fgdv_A") },
  { name: "an altered issue time", change: async (t, value) => value.replace(/\.\d+\./, `.${t.clock.nowSeconds() + 60}.`) },
  { name: "a forged value", change: async () => `fgdv_${"A".repeat(22)}.1.${"A".repeat(43)}` },
  {
    name: "a cookie from before the password was set again (even to the same one)",
    change: async (t, value, user) => {
      await t.store.users.replacePassword(user.id, await hashPassword(user.password, { iterations: 1000, random: t.app.deps.random }));
      return value;
    },
  },
];

for (const row of noExemption) {
  test(`${row.name} gives no exemption from the username-wide lock`, async () => {
    const t = await app();
    const user = await t.seed.user({ username: "alice@example.com" });
    const browser = await signedInBefore(t, user);
    browser.cookies.set("fieldgate_device", await row.change(t, browser.cookies.get("fieldgate_device")!, user));
    await lockUsername(t, user.username);
    assert.equal((await signIn(from(browser, t, "198.51.100.81"), user)).status, 429);
  });
}

test("a device cookie older than its lifetime gives no exemption", async () => {
  const t = await app();
  const user = await t.seed.user();
  const browser = await signedInBefore(t, user);
  t.clock.advance(DEVICE_TTL_SECONDS);
  await lockUsername(t, user.username);
  assert.equal((await signIn(from(browser, t, "198.51.100.81"), user)).status, 429);
});

test("a device cookie stops exempting after the device's own failure limit", async () => {
  const t = await app();
  const user = await t.seed.user();
  const browser = await signedInBefore(t, user);
  await lockUsername(t, user.username);
  // Each guess from another address, so only the device's own key can stop them: a stolen cookie moved around.
  for (let i = 0; i < MAX; i++) {
    const res = await signIn(from(browser, t, `198.51.100.${90 + i}`), { username: user.username, password: "guess" });
    assert.equal(res.status, 400, "checked, not held back by the username-wide lock");
  }
  assert.equal((await signIn(from(browser, t, "198.51.100.99"), user)).status, 429, "now as unknown as any browser");
  // The device's failures expire with the window; the username is locked again meanwhile.
  t.clock.advance(t.config.throttleWindowSeconds);
  await lockUsername(t, user.username);
  assert.equal((await signIn(from(browser, t, "198.51.100.99"), user)).status, 303, "known again after the window");
});

test("a device cookie does not lift the limit on the username from its own address", async () => {
  const t = await app();
  const user = await t.seed.user();
  const browser = await signedInBefore(t, user);
  const neighbour = testBrowser(t.app, { clientIp: "198.51.100.77" });
  for (let i = 0; i < MAX; i++) await signIn(neighbour, { username: user.username, password: "guess" });
  assert.equal((await signIn(from(browser, t, "198.51.100.77"), user)).status, 429);
});
