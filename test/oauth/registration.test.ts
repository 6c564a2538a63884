// Registration rules: a rejected value is RegistrationError "invalid", a username in use is "taken".
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import {
  createUser,
  RegistrationError,
  validateOrgSlug,
  validatePassword,
  validateRedirectUri,
  validateScope,
  validateUsername,
} from "../../src/oauth/registration.ts";
import { openTestApp } from "../helpers/test_app.ts";

const invalid: { name: string; check: () => unknown }[] = [
  { name: "a redirect URI with a fragment", check: () => validateRedirectUri("https://app.example/cb#x") },
  { name: "an http redirect URI off loopback", check: () => validateRedirectUri("http://app.example/cb") },
  { name: "a redirect URI carrying a response parameter", check: () => validateRedirectUri("https://app.example/cb?code=1") },
  { name: "an unknown scope", check: () => validateScope("fields:write") },
  { name: "a username with a space", check: () => validateUsername("a b") },
  { name: "a short password", check: () => validatePassword("short") },
  { name: "an uppercase organization slug", check: () => validateOrgSlug("Acme") },
];

for (const row of invalid) {
  test(`registration refuses ${row.name} as invalid`, () => {
    assert.throws(row.check, (error) => error instanceof RegistrationError && error.reason === "invalid");
  });
}

test("registration accepts values written as the rules ask", () => {
  assert.equal(validateRedirectUri("http://127.0.0.1:8080/cb"), "http://127.0.0.1:8080/cb");
  assert.equal(validateScope("fields:read fields:read"), "fields:read");
  assert.equal(validateUsername("alice@example.com"), "alice@example.com");
  assert.equal(validateOrgSlug("acme-2"), "acme-2");
});

test("createUser refuses a username already in use as taken, before writing", async () => {
  const t = await openTestApp();
  const existing = await t.seed.user({ username: "alice@example.com" });
  const input = { username: existing.username, name: null, org: "other", passwordHash: null, now: 1 };
  await assert.rejects(createUser(t.store, input), (error) => error instanceof RegistrationError && error.reason === "taken");
  assert.equal(await t.store.organizations.findBySlug("other"), undefined);
});
