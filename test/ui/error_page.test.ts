import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { get } from "../helpers/requests.ts";
import { errorViewOf, renderErrorPage, waitInWords, type Refusal } from "../../src/ui/error_page.ts";
import { HttpError } from "../../src/http/errors.ts";
import { OAuthError, temporarilyUnavailable, tooManyRequests } from "../../src/oauth/errors.ts";

const NAVIGATION = { "sec-fetch-dest": "document", accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

function assertPageHeaders(res: Response): void {
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'.*frame-ancestors 'none'/);
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
}

for (const path of ["/acount", "/account/", "/signin/", "/demo/", "/nope/deeper?x=1"]) {
  test(`a browser navigating to the unknown path ${path} gets the HTML "Page not found" page`, async () => {
    const t = await openTestApp();
    const res = await t.app.fetch(get(path, { ...NAVIGATION, "x-request-id": "req-404-test" }));
    assert.equal(res.status, 404);
    assertPageHeaders(res);
    const body = await res.text();
    assert.match(body, /<title>Page not found · fieldgate<\/title>/);
    assert.match(body, /<h1>Page not found<\/h1>/);
    assert.match(body, /<a href="\/">/);
    assert.match(body, /<a href="\/account">/);
    assert.match(body, /req-404-test/, "the request id is shown for the user to quote");
  });
}

for (const headers of [{}, { accept: "application/json" }, { accept: "*/*" }] as Record<string, string>[]) {
  test(`an API client (Accept ${JSON.stringify(headers)}) still gets the JSON 404`, async () => {
    const t = await openTestApp();
    const res = await t.app.fetch(get("/acount", headers));
    assert.equal(res.status, 404);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal((await res.json() as { error: string }).error, "not_found");
  });
}

for (const path of ["/oauth/tokn", "/graphql/", "/.well-known/openid-configuration", "/healthz/x", "/metrics"]) {
  test(`a browser navigating to the unknown API path ${path} gets JSON`, async () => {
    const t = await openTestApp();
    const res = await t.app.fetch(get(path, NAVIGATION));
    assert.equal(res.status, 404);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  });
}

// Titles and messages per kind of refusal, in words a user can act on; the technical description goes to Details.
const views: { name: string; error: Refusal; title: RegExp; message: RegExp }[] = [
  { name: "404", error: new HttpError("not_found", "No such endpoint"), title: /^Page not found$/, message: /no page at this address/ },
  {
    name: "405",
    error: new HttpError("method_not_allowed", "Method GET is not allowed here", { headers: { allow: "POST" } }),
    title: /cannot be opened this way/,
    message: /where a form is sent/,
  },
  { name: "429 for 58 s", error: tooManyRequests(58), title: /^Too many attempts$/, message: /Try again in about a minute\./ },
  { name: "429 for 600 s", error: tooManyRequests(600), title: /^Too many attempts$/, message: /Try again in about 10 minutes\./ },
  { name: "503", error: temporarilyUnavailable(10), title: /^Service busy$/, message: /Try again in a few seconds\./ },
  {
    name: "413",
    error: new HttpError("payload_too_large", "Request body is larger than 65536 bytes"),
    title: /^Form too large$/,
    message: /more than fieldgate accepts/,
  },
  {
    name: "400 from the authorization endpoint",
    error: new OAuthError("invalid_request", "The request has no valid client_id"),
    title: /^Request refused$/,
    message: /^The request has no valid client_id$/,
  },
];

for (const row of views) {
  test(`the ${row.name} error page has its own title and a plain message`, () => {
    const view = errorViewOf(row.error, "abc123");
    assert.match(view.title, row.title);
    assert.match(view.message, row.message);
    assert.equal(view.status, row.error.status);
    const page = renderErrorPage(view);
    assert.match(page, /<a href="\/">Go to the fieldgate home page<\/a>/, "every error page links home");
    assert.match(page, /reference <code>abc123<\/code>/);
  });
}

test("the error page escapes every value", () => {
  const page = renderErrorPage({ status: 400, title: "<t>", message: "<m>", detail: "<d>", advice: "<a>", requestId: "<r>" });
  assert.doesNotMatch(page, /<[tmdar]>/);
  assert.match(page, /&lt;m&gt;/);
});

test("an error page without a request id says nothing about a reference", () => {
  assert.doesNotMatch(renderErrorPage({ status: 500, title: "Something went wrong", message: "x" }), /reference/);
});

const waits: [number, string][] = [
  [1, "a few seconds"],
  [10, "a few seconds"],
  [11, "about a minute"],
  [60, "about a minute"],
  [120, "about 2 minutes"],
  [900, "about 15 minutes"],
  [3_600, "about an hour"],
  [7_200, "about 2 hours"],
  [Number.NaN, "a few seconds"],
];

for (const [seconds, words] of waits) {
  test(`a wait of ${seconds} s reads "${words}"`, () => {
    assert.equal(waitInWords(seconds), words);
  });
}

test("a 405 for a browser on an HTML route is an HTML page with its own title, the request id and a link home", async () => {
  const t = await openTestApp();
  const res = await t.app.fetch(get("/signout", { ...NAVIGATION, "x-request-id": "req-405" }));
  assert.equal(res.status, 405);
  assertPageHeaders(res);
  const body = await res.text();
  assert.match(body, /cannot be opened this way/);
  assert.match(body, /req-405/);
  assert.match(body, /<a href="\/">/);
});
