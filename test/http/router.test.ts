import { test } from "node:test";
import assert from "node:assert/strict";
import { createRouter, type Route } from "../../src/http/router.ts";
import { OAuthError } from "../../src/oauth/errors.ts";

const ok = async () => new Response("ok");
const routes: Route[] = [
  { method: "GET", path: "/a", handler: ok },
  { method: "POST", path: "/a", handler: ok },
  { method: "POST", path: "/b", surface: "html", handler: ok },
];

function refusal(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof OAuthError);
    return error;
  }
  assert.fail("expected an OAuthError");
}

test("router matches method and exact path", () => {
  const router = createRouter(routes);
  assert.equal(router.match("POST", "/a"), routes[1]);
  assert.equal(router.match("GET", "/a"), routes[0]);
});

test("router serves HEAD with the GET route", () => {
  assert.equal(createRouter(routes).match("HEAD", "/a"), routes[0]);
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

test("router knows each path's error surface", () => {
  const router = createRouter(routes);
  assert.equal(router.surfaceOf("/b"), "html");
  assert.equal(router.surfaceOf("/a"), "json");
  assert.equal(router.surfaceOf("/unknown"), "json");
});

test("router refuses a duplicate route at startup", () => {
  assert.throws(() => createRouter([...routes, { method: "GET", path: "/a", handler: ok }]), /duplicate route GET \/a/);
});
