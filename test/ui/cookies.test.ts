import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { cookieName, readCookies, setCookie } from "../../src/ui/cookies.ts";

test("cookies: readCookies parses pairs and keeps the first of a repeated name", () => {
  const cookies = readCookies(new Request("http://x/", { headers: { cookie: "a=1; b=two; a=3; junk; =x" } }));
  assert.equal(cookies.get("a"), "1");
  assert.equal(cookies.get("b"), "two");
  assert.equal(cookies.size, 2);
});

test("cookies: http deployments get plain names and no Secure", () => {
  const config = { baseUrl: "http://localhost:8080" };
  assert.equal(cookieName(config, "s"), "s");
  assert.equal(setCookie(config, "s", "v", 60), "s=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax");
});

test("cookies: https deployments get __Host- names and Secure", () => {
  const config = { baseUrl: "https://auth.example" };
  assert.equal(cookieName(config, "s"), "__Host-s");
  assert.match(setCookie(config, "__Host-s", "v", 0), /^__Host-s=v; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax; Secure$/);
});
