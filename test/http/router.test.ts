import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { acceptQuality, createRouter, isPageNavigation, type Route } from "../../src/http/router.ts";
import { HttpError } from "../../src/http/errors.ts";

const ok = async () => new Response("ok");
const routes: Route[] = [
  { method: "GET", path: "/a", handler: ok },
  { method: "POST", path: "/a", handler: ok },
  { method: "POST", path: "/b", surface: "html", handler: ok },
];

function refusal(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof HttpError);
    return error;
  }
  assert.fail("expected an HttpError");
}

test("router matches method and exact path", () => {
  const router = createRouter(routes);
  assert.equal(router.match("POST", "/a"), routes[1]);
  assert.equal(router.match("GET", "/a"), routes[0]);
});

test("router serves HEAD with the GET route", () => {
  assert.equal(createRouter(routes).match("HEAD", "/a"), routes[0]);
});

test("router's 405 carries the path's refusal headers beside Allow", () => {
  const router = createRouter([{ method: "POST", path: "/c", handler: ok, refusalHeaders: { vary: "Origin" } }]);
  const error = refusal(() => router.match("PUT", "/c"));
  assert.equal(error.status, 405);
  assert.deepEqual(error.headers, { vary: "Origin", allow: "POST" });
});

const misses: { method: string; path: string; status: number; allow?: string }[] = [
  { method: "GET", path: "/nope", status: 404 },
  { method: "GET", path: "/a/", status: 404 },
  { method: "GET", path: "/A", status: 404 },
  { method: "DELETE", path: "/a", status: 405, allow: "GET, POST, HEAD" },
  { method: "GET", path: "/b", status: 405, allow: "POST" },
  { method: "HEAD", path: "/b", status: 405, allow: "POST" },
];

for (const row of misses) {
  test(`router answers ${row.method} ${row.path} with ${row.status}`, () => {
    const error = refusal(() => createRouter(routes).match(row.method, row.path));
    assert.equal(error.status, row.status);
    assert.equal(error.headers.allow, row.allow);
  });
}

test("router names a common method in its 405 text, and never echoes an unusual one (Deno passes any token)", () => {
  assert.equal(refusal(() => createRouter(routes).match("DELETE", "/a")).message, "Method DELETE is not allowed here");
  const odd = refusal(() => createRouter(routes).match("X".repeat(60_000), "/a"));
  assert.equal(odd.status, 405);
  assert.equal(odd.message, "This method is not allowed here");
});

test("router knows each path's error surface", () => {
  const router = createRouter(routes);
  assert.equal(router.surfaceOf("/b"), "html");
  assert.equal(router.surfaceOf("/a"), "json");
  assert.equal(router.surfaceOf("/unknown"), "json");
});

const CHROME_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

// Unknown paths: a browser loading a page gets an HTML 404, API clients (and anything under an API prefix) JSON.
const unknownPaths: { name: string; path: string; headers: Record<string, string>; surface: "html" | "json" }[] = [
  { name: "a browser navigation (Fetch Metadata)", path: "/acount", headers: { "sec-fetch-dest": "document" }, surface: "html" },
  { name: "a browser's Accept without Fetch Metadata", path: "/account/", headers: { accept: CHROME_ACCEPT }, surface: "html" },
  { name: "Accept: text/html", path: "/demo/", headers: { accept: "text/html" }, surface: "html" },
  { name: "no headers (curl, fetch)", path: "/acount", headers: {}, surface: "json" },
  { name: "Accept: */*", path: "/acount", headers: { accept: "*/*" }, surface: "json" },
  { name: "Accept: application/json", path: "/acount", headers: { accept: "application/json" }, surface: "json" },
  { name: "Accept preferring JSON to HTML", path: "/acount", headers: { accept: "text/html;q=0.5, application/json" }, surface: "json" },
  { name: "HTML and JSON equally acceptable", path: "/acount", headers: { accept: "application/json, text/html" }, surface: "json" },
  { name: "an image request from a page", path: "/favicon.ico", headers: { "sec-fetch-dest": "image", accept: "image/*,*/*;q=0.8" }, surface: "json" },
  { name: "a navigation under /oauth/", path: "/oauth/tokn", headers: { "sec-fetch-dest": "document", accept: CHROME_ACCEPT }, surface: "json" },
  { name: "a navigation under /graphql/", path: "/graphql/x", headers: { "sec-fetch-dest": "document", accept: CHROME_ACCEPT }, surface: "json" },
  { name: "a navigation under /.well-known/", path: "/.well-known/openid-configuration", headers: { "sec-fetch-dest": "document" }, surface: "json" },
  { name: "a navigation to /healthz/", path: "/healthz/", headers: { "sec-fetch-dest": "document" }, surface: "json" },
  { name: "a navigation to /metrics", path: "/metrics", headers: { "sec-fetch-dest": "document" }, surface: "json" },
  { name: "a navigation to a page merely starting like an API prefix", path: "/oauthx", headers: { "sec-fetch-dest": "document" }, surface: "html" },
];

for (const row of unknownPaths) {
  test(`router renders a 404 for ${row.name} as ${row.surface}`, () => {
    const request = new Request(`http://x${row.path}`, { headers: row.headers });
    assert.equal(createRouter(routes).surfaceOf(row.path, request), row.surface);
  });
}

test("router keeps a known route's surface whoever asks", () => {
  const router = createRouter(routes);
  const navigation = new Request("http://x/a", { headers: { "sec-fetch-dest": "document", accept: CHROME_ACCEPT } });
  assert.equal(router.surfaceOf("/a", navigation), "json");
  assert.equal(router.surfaceOf("/b", new Request("http://x/b", { headers: { accept: "application/json" } })), "html");
});

const qualities: [string | null, string, number][] = [
  [null, "text/html", 1],
  [CHROME_ACCEPT, "text/html", 1],
  [CHROME_ACCEPT, "application/json", 0.8],
  ["text/*;q=0.4, text/html;q=0.7", "text/html", 0.7],
  ["text/*;q=0.4", "text/html", 0.4],
  ["application/json", "text/html", 0],
  ["text/html;q=nonsense", "text/html", 0],
  ["TEXT/HTML;Q=0.3", "text/html", 0.3],
];

for (const [accept, type, q] of qualities) {
  test(`Accept ${JSON.stringify(accept)} gives ${type} the quality ${q}`, () => {
    assert.equal(acceptQuality(accept, type), q);
  });
}

test("a page navigation is recognised by Fetch Metadata alone", () => {
  assert.equal(isPageNavigation(new Request("http://x/", { headers: { "sec-fetch-dest": "document", accept: "*/*" } })), true);
  assert.equal(isPageNavigation(new Request("http://x/", { headers: { "sec-fetch-dest": "empty", accept: "*/*" } })), false);
});

test("router refuses a duplicate route at startup", () => {
  assert.throws(() => createRouter([...routes, { method: "GET", path: "/a", handler: ok }]), /duplicate route GET \/a/);
});
