import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { isBcryptDigest, isSha256Hex, parseBoolean, parseDatetime, sha256Of } from "../../../src/cli/doorkeeper/values.ts";

const NEW_YEAR = Date.UTC(2026, 0, 1) / 1000;

for (const [text, expected] of [
  ["2026-01-01 00:00:00", NEW_YEAR],
  ["2026-01-01 00:00:00.123456", NEW_YEAR],
  ["2026-01-01T00:00:00Z", NEW_YEAR],
  ["2026-01-01 01:00:00+01", NEW_YEAR],
  ["2026-01-01 01:30:00+01:30", NEW_YEAR],
  ["2025-12-31 19:00:00-0500", NEW_YEAR],
  ["2026-02-30 00:00:00", undefined],
  ["2026-01-01", undefined],
  ["yesterday", undefined],
  ["", undefined],
] as const) {
  test(`parseDatetime(${JSON.stringify(text)}) is ${expected}`, () => {
    assert.equal(parseDatetime(text), expected);
  });
}

test("parseBoolean reads the three databases' spellings and nothing else", () => {
  for (const yes of ["1", "t", "true", "TRUE"]) assert.equal(parseBoolean(yes), true);
  for (const no of ["0", "f", "false"]) assert.equal(parseBoolean(no), false);
  for (const other of ["", "yes", "2", undefined]) assert.equal(parseBoolean(other), undefined);
});

test("sha256Of keeps a SHA-256 hex column and hashes a plaintext one", async () => {
  const hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  assert.equal(await sha256Of("test"), hex);
  assert.equal(await sha256Of(hex), hex);
  assert.equal(isSha256Hex(hex.toUpperCase()), false);
});

test("isBcryptDigest knows the $2a$, $2b$ and $2y$ forms", () => {
  const body = "$12$" + "a".repeat(53);
  for (const prefix of ["$2a", "$2b", "$2y"]) assert.equal(isBcryptDigest(prefix + body), true);
  assert.equal(isBcryptDigest("$2x" + body), false);
  assert.equal(isBcryptDigest("plain-secret"), false);
});
