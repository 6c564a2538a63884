import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { constantTimeEqual } from "../../src/crypto/compare.ts";

const rows: { name: string; a: string | Uint8Array; b: string | Uint8Array; equal: boolean }[] = [
  { name: "equal strings", a: "abc", b: "abc", equal: true },
  { name: "one byte differs at the end", a: "abc", b: "abd", equal: false },
  { name: "one byte differs at the start", a: "xbc", b: "abc", equal: false },
  { name: "different lengths", a: "abc", b: "abcd", equal: false },
  { name: "empty values", a: "", b: "", equal: true },
  { name: "equal bytes", a: new Uint8Array([1, 2, 3]), b: new Uint8Array([1, 2, 3]), equal: true },
  { name: "bytes against their UTF-8 string", a: new Uint8Array([0x61]), b: "a", equal: true },
  { name: "non-ASCII compared as UTF-8", a: "é", b: "e\u0301", equal: false },
];

for (const row of rows) {
  test(`constantTimeEqual: ${row.name}`, () => {
    assert.equal(constantTimeEqual(row.a, row.b), row.equal);
  });
}
