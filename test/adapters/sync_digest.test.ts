// syncSha256Hex must agree with the portable crypto.subtle digest, byte for byte, on every input.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { syncSha256Hex } from "../../src/adapters/sync_digest.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";

const inputs = [
  { name: "empty string", value: "" },
  { name: "token-shaped ASCII", value: "fgat_" + "A1b2-_".repeat(7) },
  { name: "multi-byte UTF-8", value: "Feld Nördlich 🌾" },
  { name: "lone surrogate (encoded as U+FFFD by both)", value: "a\uD800b" },
];

for (const { name, value } of inputs) {
  test(`syncSha256Hex matches sha256Hex for ${name}`, async () => {
    assert.equal(await syncSha256Hex(value), await sha256Hex(value));
  });
}

test("syncSha256Hex gives the known SHA-256 of abc", async () => {
  assert.equal(await syncSha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});
