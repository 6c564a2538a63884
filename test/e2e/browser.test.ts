// End-to-end in a real headless Chromium (playwright-core + Debian's chromium) against a real socket,
// served by the runtime's own listener: node:http under Node, Deno.serve under Deno.
import { after, before, beforeEach } from "node:test";
import { test as boundedTest } from "../helpers/bounded.ts";
import { findExecutable, requireComponent } from "../helpers/system_component.ts";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { openTestApp } from "../helpers/test_app.ts";
import { createApp } from "../../src/app.ts";
import { listenNode } from "../../src/adapters/serve_node.ts";
import { listenDeno } from "../../src/adapters/serve_deno.ts";
import type { Listener } from "../../src/cli/types.ts";

const CHROMIUM = requireComponent(
  "Chromium",
  () => findExecutable(process.env.CHROMIUM_PATH, "chromium"),
  "apt-get install chromium, or set CHROMIUM_PATH to a Chromium binary",
);
// Without Chromium none of these tests is registered: requireComponent has reported them as not run.
const test: typeof boundedTest = CHROMIUM === undefined ? async () => {} : boundedTest;
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const ARTIFACTS = new URL("../../artifacts/", import.meta.url);
// The client's callback: a web application on an origin of its own, as a real third-party application would be.
// Chromium never reaches the network for it: the context answers it (a loopback callback would get no remembered
// consent).
const CALLBACK_ORIGIN = "https://notes.example.test";
const LONG_NAME = "AgroSynchronisationConnectorForFieldNotebooks";

interface World {
  origin: string;
  callbackOrigin: string;
  clientId: string;
  /** A client no test approves, so its consent page always shows; its name has no break opportunity. */
  longNameClientId: string;
  user: { username: string; password: string };
  context: BrowserContext;
  listener: Listener;
  profile: string;
}


async function setUp(executablePath: string): Promise<World> {
  const { chromium } = await import("playwright-core");
  const listenRuntime = "Deno" in globalThis ? listenDeno : listenNode;
  let built!: { clientId: string; longNameClientId: string; user: { username: string; password: string } };
  const listener = await listenRuntime({ port: 0, host: "127.0.0.1", graceMs: 1_000 }, async (port) => {
    const origin = `http://127.0.0.1:${port}`;
    // One person signs in for nearly every test here, many times a minute: the sign-in success limit and the session
    // cap are tested in test/security/sign_in_limits.test.ts, not by these pages.
    const t = await openTestApp({
      FIELDGATE_BASE_URL: origin,
      FIELDGATE_DEMO: "true",
      FIELDGATE_SIGNIN_LIMIT: "1000",
      FIELDGATE_MAX_SESSIONS: "1000",
    });
    const client = await t.seed.client({ name: "Field notes app", redirectUri: `${CALLBACK_ORIGIN}/cb` });
    const demo = await t.seed.client({ name: "Demo field notes app", redirectUri: `${origin}/demo/callback` });
    const longName = await t.seed.client({ name: LONG_NAME, redirectUri: `${CALLBACK_ORIGIN}/long-cb` });
    const user = await t.seed.user({ username: "demo" });
    await t.seed.fields(3);
    built = { clientId: client.clientId, longNameClientId: longName.clientId, user };
    return createApp({
      config: t.config,
      store: t.store,
      clock: t.app.deps.clock,
      random: t.app.deps.random,
      log: () => {},
      demo: { clientId: demo.clientId, clientSecret: demo.clientSecret },
    });
  });
  const profile = await mkdtemp(join(tmpdir(), "fieldgate-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: ARGS });
  await context.route(`${CALLBACK_ORIGIN}/**`, (route) =>
    route.fulfill({ contentType: "text/html; charset=utf-8", body: "<!doctype html><title>callback</title><p>Callback received</p>" })
  );
  await mkdir(ARTIFACTS, { recursive: true });
  return {
    origin: listener.url, callbackOrigin: CALLBACK_ORIGIN, ...built, context, listener, profile,
  };
}

function authorizeUrl(w: World, state: string, client: { id: string; path: string } = { id: w.clientId, path: "/cb" }): string {
  const params = new URLSearchParams({
    client_id: client.id,
    response_type: "code",
    redirect_uri: `${w.callbackOrigin}${client.path}`,
    scope: "fields:read",
    state,
  });
  return `${w.origin}/oauth/authorize?${params}`;
}

async function signInOn(page: Page, w: World, password = w.user.password): Promise<void> {
  await page.getByLabel("Username").fill(w.user.username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

let w: World;
let page: Page;

// The hooks too run only with Chromium: beforeEach would otherwise run before the test that reports it missing.
if (CHROMIUM !== undefined) {
  const executablePath = CHROMIUM;
  before(async () => {
    w = await setUp(executablePath);
  });
  beforeEach(async () => {
    await w.context.clearCookies();
    page = w.context.pages()[0] ?? (await w.context.newPage());
  });
  after(async () => {
    await w?.context.close();
    await w?.listener.close();
    if (w) await rm(w.profile, { recursive: true, force: true });
  });
}

test("browser: sign in and approve lands on the client's callback with code, state and iss", async () => {
  await page.goto(authorizeUrl(w, "approve-state"));
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.screenshot({ path: new URL("sign-in.png", ARTIFACTS).pathname, fullPage: true });
  await signInOn(page, w);
  await page.getByRole("button", { name: "Approve" }).waitFor();
  assert.match(await page.textContent("body") ?? "", /Field notes app/);
  await page.screenshot({ path: new URL("consent.png", ARTIFACTS).pathname, fullPage: true });
  await page.getByRole("button", { name: "Approve" }).click();
  await page.waitForURL((url) => url.origin === w.callbackOrigin);
  const url = new URL(page.url());
  assert.equal(url.pathname, "/cb");
  assert.match(url.searchParams.get("code") ?? "", /^fgac_/);
  assert.equal(url.searchParams.get("state"), "approve-state");
  assert.equal(url.searchParams.get("iss"), w.origin);
});

test("browser: a remembered consent goes from sign-in straight to the callback", async () => {
  await page.goto(authorizeUrl(w, "again"));
  await signInOn(page, w);
  await page.waitForURL((url) => url.origin === w.callbackOrigin);
  assert.equal(new URL(page.url()).searchParams.get("state"), "again");
});

test("browser: deny lands on the callback with access_denied", async () => {
  await page.goto(`${w.origin}/account`);
  await signInOn(page, w);
  await page.getByRole("heading", { name: "Your account" }).waitFor();
  const revoke = page.getByRole("button", { name: /Revoke access/ });
  if (await revoke.count() > 0) await revoke.first().click();
  await page.goto(authorizeUrl(w, "deny-state"));
  await page.getByRole("button", { name: "Deny" }).click();
  await page.waitForURL((url) => url.origin === w.callbackOrigin);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get("error"), "access_denied");
  assert.equal(url.searchParams.get("state"), "deny-state");
  assert.equal(url.searchParams.get("code"), null);
});

test("browser: a state outside VSCHAR is refused at once; every printable ASCII character survives the consent form", async () => {
  // Deny, not Approve, so the long-named client's consent page keeps showing for the tests below.
  const client = { id: w.longNameClientId, path: "/long-cb" };
  // Chromium rewrites a LF in the hidden input, so such a state could never be approved: refused before sign-in.
  // The context answers the callback only at the end of a form's redirects, not of goto's: the request is the proof.
  // A tab of its own, whose failed load cannot interrupt the next navigation.
  const tab = await w.context.newPage();
  const [refused] = await Promise.all([
    tab.waitForRequest((request) => request.url().startsWith(w.callbackOrigin)),
    tab.goto(authorizeUrl(w, "a\nb", client)).catch(() => undefined),
  ]).finally(() => tab.close());
  let url = new URL(refused.url());
  assert.equal(url.searchParams.get("error"), "invalid_request");
  assert.equal(url.searchParams.get("state"), null);
  const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join("");
  await page.goto(authorizeUrl(w, printable, client));
  await signInOn(page, w);
  await page.getByRole("button", { name: "Deny" }).click();
  await page.waitForURL((url) => url.origin === w.callbackOrigin);
  url = new URL(page.url());
  assert.equal(url.searchParams.get("error"), "access_denied");
  assert.equal(url.searchParams.get("state"), printable);
});

test("browser: a wrong password shows the generic error and stays on the sign-in form", async () => {
  await page.goto(authorizeUrl(w, "wrong"));
  await signInOn(page, w, "not the password");
  await page.getByRole("alert").waitFor();
  assert.match(await page.getByRole("alert").textContent() ?? "", /Incorrect username or password/);
  assert.equal(new URL(page.url()).origin, w.origin);
  assert.equal(await page.getByLabel("Username").inputValue(), w.user.username);
});

test("browser: the demo walkthrough exchanges the code, queries GraphQL, refreshes and revokes", async () => {
  // The landing page opened under another name for the same server (localhost, while the base URL says
  // 127.0.0.1): the demo must move to the base URL's origin, where its callback and cookie live.
  await page.goto(`${w.origin.replace("127.0.0.1", "localhost")}/`);
  await page.getByRole("link", { name: "Try the demo" }).click();
  await signInOn(page, w);
  await page.getByRole("button", { name: "Approve" }).click();
  await page.waitForURL(`${w.origin}/demo`);
  const body = () => page.textContent("main").then((t) => t ?? "");
  assert.match(await body(), /"total_count": 3/);
  assert.match(await body(), /"token_type": "Bearer"/);
  await page.getByRole("button", { name: "Refresh the tokens" }).click();
  await page.waitForURL(`${w.origin}/demo`);
  assert.match(await body(), /refresh_token\) HTTP 200/);
  await page.getByRole("button", { name: "Revoke the tokens" }).click();
  await page.waitForURL(`${w.origin}/demo`);
  assert.match(await body(), /POST \/oauth\/revoke \(refresh_token\) HTTP 200/);
  assert.match(await body(), /HTTP 401/);
});

/**
 * The id of the focused element once the page has rendered: a browser applies `autofocus` when it next updates the
 * rendering, which can come after the alert the test waited for is already in the DOM.
 */
async function focusedId(page: Page): Promise<string | undefined> {
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  return page.evaluate(() => document.activeElement?.id);
}

function longNameAuthorizeUrl(state: string): string {
  return authorizeUrl(w, state, { id: w.longNameClientId, path: "/long-cb" });
}

/** WCAG relative luminance contrast of two CSS rgb()/rgba() colours. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, bl] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

test("browser: a mistyped address shows the HTML 'Page not found' page with the page headers", async () => {
  const res = await page.goto(`${w.origin}/acount`);
  assert.equal(res?.status(), 404);
  assert.match(res?.headers()["content-security-policy"] ?? "", /frame-ancestors 'none'/);
  assert.equal(await page.title(), "Page not found · fieldgate");
  await page.getByRole("link", { name: "Go to the fieldgate home page" }).waitFor();
  assert.equal(await page.getByRole("link", { name: "Your account" }).getAttribute("href"), "/account");
});

test("browser: a sign-in form whose pre-session cookie is gone comes back, says why, and then signs in", async () => {
  await page.goto(`${w.origin}/signin`);
  await w.context.clearCookies();
  await signInOn(page, w);
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.textContent() ?? "", /timed out; enter your password again.*needs cookies/);
  assert.equal(await page.getByLabel("Username").inputValue(), w.user.username);
  assert.equal(await focusedId(page), "password");
  await page.getByLabel("Password").fill(w.user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Your account" }).waitFor();
});

test("browser: after a wrong password the title says Error, the password has focus and both inputs are invalid", async () => {
  await page.goto(`${w.origin}/signin`);
  await signInOn(page, w, "not the password");
  await page.getByRole("alert").waitFor();
  assert.equal(await page.title(), "Error: Sign in · fieldgate");
  assert.equal(await focusedId(page), "password");
  for (const label of ["Username", "Password"]) {
    assert.equal(await page.getByLabel(label).getAttribute("aria-invalid"), "true", label);
    assert.equal(await page.getByLabel(label).getAttribute("aria-describedby"), "signin-error", label);
  }
});

test("browser: Sign out on the consent page leads to that application's sign-in page, not away from it", async () => {
  await page.goto(longNameAuthorizeUrl("switch-account"));
  await signInOn(page, w);
  await page.getByRole("button", { name: "Approve" }).waitFor();
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  const url = new URL(page.url());
  assert.equal(url.pathname, "/oauth/authorize");
  assert.equal(url.searchParams.get("state"), "switch-account");
  assert.match(await page.textContent("main") ?? "", new RegExp(`${LONG_NAME} wants to access your fieldgate account`));
});

test("browser: signing out from the account page lands on the home page saying so", async () => {
  await page.goto(`${w.origin}/account`);
  await signInOn(page, w);
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.getByRole("status").waitFor();
  assert.equal(await page.getByRole("status").textContent(), "You have signed out.");
});

test("browser: another site's form posting to /signout leaves the user signed in", async () => {
  // localhost and 127.0.0.1 are different sites: the browser sends no SameSite=Lax cookie with this POST.
  const attacker = `http://localhost:${new URL(w.origin).port}/attacker-page`;
  await w.context.route(attacker, (route) => route.fulfill({
    contentType: "text/html; charset=utf-8",
    body: `<!doctype html><form id="f" method="post" action="${w.origin}/signout"></form><script>f.submit()</script>`,
  }));
  await page.goto(`${w.origin}/account`);
  await signInOn(page, w);
  await page.getByRole("heading", { name: "Your account" }).waitFor();
  await page.goto(attacker);
  await page.waitForURL((url) => url.origin === w.origin);
  await page.waitForLoadState();
  assert.equal((await w.context.cookies(w.origin)).filter((c) => c.name === "fieldgate_session").length, 1);
  await page.goto(`${w.origin}/account`);
  await page.getByRole("heading", { name: "Your account" }).waitFor();
});

test("browser: the focus ring has 3:1 against the page and the card in light mode; dark mode keeps the yellow", async () => {
  for (const colorScheme of ["light", "dark"] as const) {
    const tab = await w.context.newPage();
    try {
      await tab.emulateMedia({ colorScheme });
      await tab.goto(`${w.origin}/signin`);
      // Keyboard focus, as a keyboard user meets it: brand link, then the username field.
      await tab.keyboard.press("Tab");
      await tab.keyboard.press("Tab");
      const seen = await tab.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        const style = getComputedStyle(el);
        return {
          id: el.id,
          visible: el.matches(":focus-visible"),
          outline: style.outlineColor,
          outlineWidth: parseFloat(style.outlineWidth),
          outlineStyle: style.outlineStyle,
          shadow: style.boxShadow,
          card: getComputedStyle(el.closest(".card")!).backgroundColor,
          page: getComputedStyle(document.body).backgroundColor,
        };
      });
      assert.equal(seen.id, "username");
      assert.ok(seen.visible);
      assert.equal(seen.outlineStyle, "solid");
      assert.ok(seen.outlineWidth >= 2, `${colorScheme}: outline ${seen.outlineWidth}px`);
      for (const [where, background] of [["page", seen.page], ["card", seen.card]] as const) {
        const ratio = contrast(seen.outline, background);
        assert.ok(ratio >= 3, `${colorScheme}: focus outline ${seen.outline} on the ${where} ${background} is ${ratio.toFixed(2)}:1`);
      }
      if (colorScheme === "light") assert.match(seen.shadow, /rgb\(255, 191, 71\)/, "the yellow halo outside the dark ring");
      else assert.equal(seen.outline, "rgb(255, 191, 71)", "dark mode keeps the yellow ring");
    } finally {
      await tab.close();
    }
  }
});

test("browser: at 320 px a long application name reflows on the sign-in and consent pages", async () => {
  const narrow = await w.context.newPage();
  try {
    await narrow.setViewportSize({ width: 320, height: 640 });
    await narrow.goto(longNameAuthorizeUrl("narrow"));
    await narrow.getByRole("heading", { name: "Sign in" }).waitFor();
    const width = () => narrow.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(await width() <= 320, `sign-in page is ${await width()} px wide`);
    await signInOn(narrow, w);
    await narrow.getByRole("button", { name: "Approve" }).waitFor();
    // The button shows before the stylesheet has loaded; unstyled, the long name does not wrap (706 px in one
    // clean-clone CI run under load).
    await narrow.waitForLoadState("load");
    assert.ok(await width() <= 320, `consent page is ${await width()} px wide`);
  } finally {
    await narrow.close();
  }
});

test("browser: the header link and every button on the consent page are at least 44 px in each direction", async () => {
  await page.goto(longNameAuthorizeUrl("targets"));
  await signInOn(page, w);
  await page.getByRole("button", { name: "Approve" }).waitFor();
  await page.waitForLoadState("load"); // sizes come from the stylesheet, which may still be loading
  const targets = [page.getByRole("link", { name: "fieldgate" }), ...(await page.getByRole("button").all())];
  assert.ok(targets.length >= 4);
  for (const target of targets) {
    const box = await target.boundingBox();
    const name = await target.textContent();
    assert.ok(box && box.height >= 44 && box.width >= 44, `${name}: ${box?.width}x${box?.height}`);
  }
});
