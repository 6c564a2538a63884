import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { formFields, signIn, testBrowser, type TestBrowser } from "../helpers/browser_session.ts";
import { BASE } from "../helpers/requests.ts";
import { assertNoServerErrors } from "./hostile.ts";

// Hostile post-sign-in targets: other hosts, header injection, and characters a Location header cannot carry raw
// (above U+00FF, lone surrogates), which made `Headers` throw after the session had been created.
const hostileNext: string[] = [
  "/\u0100x",
  "/\ud800",
  "/\udfff/account",
  "/account?q=\u2603",
  "/\u{1f600}",
  "/caf\u00e9",
  "/a b\"<>'`{}",
  "//evil.example/",
  "/\\evil.example",
  "/\t/evil.example",
  "/\u007f/evil.example",
  "/.//evil.example",
  "/a/../..//evil.example",
  "/%2e%2e//evil.example",
  "/%2F%2Fevil.example",
  "/ok\r\nSet-Cookie: x=1",
  "/%0d%0aLocation:%20https://evil.example",
  "https://evil.example/",
  "javascript:alert(1)",
  "\\\\evil.example",
  " /account",
  "/oauth/authorize?client_id=x&state=\u0100",
];

/** A Location we may send: printable ASCII, a path on our own origin, never "//host" or "/\host". */
function assertLocalAsciiLocation(location: string | null): void {
  assert.ok(location, "redirect without Location");
  assert.match(location, /^[\x21-\x7e]+$/, `Location is not printable ASCII: ${JSON.stringify(location)}`);
  assert.match(location, /^\/(?![/\\])/, `Location is not a local path: ${location}`);
  assert.equal(new URL(location, BASE).origin, new URL(BASE).origin);
}

async function world(): Promise<{ t: TestApp; user: { username: string; password: string } }> {
  const t = await openTestApp({ FIELDGATE_THROTTLE_MAX_FAILURES: "10000" });
  return { t, user: await t.seed.user() };
}

/** Successful sign-ins must each have produced exactly one audited session handed to the browser. */
function assertEverySuccessDelivered(t: TestApp, delivered: number): void {
  assert.equal(t.log.filter((l) => l.event === "audit.sign_in_succeeded").length, delivered);
  assertNoServerErrors(t);
}

/** The query string carrying `next` (URLSearchParams, unlike encodeURIComponent, accepts lone surrogates). */
function nextQuery(next: string): string {
  return new URLSearchParams({ next }).toString();
}

/** POSTs the sign-in form as JSON, so a lone surrogate reaches the server unreplaced (form encoding would not). */
async function postSignInJson(t: TestApp, browser: TestBrowser, fields: Record<string, string>): Promise<Response> {
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  return t.app.fetch(new Request(`${BASE}/signin`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify(fields),
  }));
}

for (const next of hostileNext) {
  const name = JSON.stringify(next);

  test(`POST /signin (form) with next=${name} signs in and redirects to a local ASCII path`, async () => {
    const { t, user } = await world();
    const browser = testBrowser(t.app);
    const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
    const res = await browser.post("/signin", { ...fields, next, username: user.username, password: user.password });
    assert.equal(res.status, 303);
    assertLocalAsciiLocation(res.headers.get("location"));
    assert.ok(res.headers.getSetCookie().some((c) => c.startsWith("fieldgate_session=")));
    assertEverySuccessDelivered(t, 1);
  });

  test(`POST /signin (JSON) with next=${name} signs in and redirects to a local ASCII path`, async () => {
    const { t, user } = await world();
    const browser = testBrowser(t.app);
    const fields = formFields(await (await browser.get("/signin")).text(), "/signin");
    const res = await postSignInJson(t, browser, { ...fields, next, username: user.username, password: user.password });
    assert.equal(res.status, 303);
    assertLocalAsciiLocation(res.headers.get("location"));
    assertEverySuccessDelivered(t, 1);
  });

  test(`GET /signin?next=${name} while signed in redirects to a local ASCII path`, async () => {
    const { t, user } = await world();
    const browser = testBrowser(t.app);
    assert.equal((await signIn(browser, user)).status, 303);
    const res = await browser.get(`/signin?${nextQuery(next)}`);
    assert.equal(res.status, 303);
    assertLocalAsciiLocation(res.headers.get("location"));
    assertNoServerErrors(t);
  });

  test(`GET /signin?next=${name} signed out shows the form`, async () => {
    const { t } = await world();
    const res = await testBrowser(t.app).get(`/signin?${nextQuery(next)}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    assertNoServerErrors(t);
  });
}

test("GET /signin?next=%2F%C4%80 while signed in redirects to the percent-encoded path", async () => {
  const { t, user } = await world();
  const browser = testBrowser(t.app);
  await signIn(browser, user);
  const res = await browser.get("/signin?next=%2F%C4%80");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/%C4%80");
});
