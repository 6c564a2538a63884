import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { formatScope, narrowScope, parseScope } from "../../src/oauth/scope.ts";
import { isOAuthError } from "../../src/oauth/errors.ts";

const invalidScope = (e: unknown) => isOAuthError(e) && e.code === "invalid_scope";

test("parseScope splits on spaces, drops empties and duplicates", () => {
  assert.deepEqual(parseScope(" a  b a "), ["a", "b"]);
  assert.deepEqual(parseScope(""), []);
});

for (const bad of ['a"b', "a\\b", "caf\u00e9", "a\tb"]) {
  test(`parseScope refuses ${JSON.stringify(bad)} (RFC 6749 §3.3)`, () => {
    assert.throws(() => parseScope(bad), invalidScope);
  });
}

test("formatScope joins with single spaces", () => {
  assert.equal(formatScope(["a", "b"]), "a b");
});

test("narrowScope defaults to the allowed scope and accepts subsets in request order", () => {
  assert.equal(narrowScope(undefined, "a b"), "a b");
  assert.equal(narrowScope("b a", "a b"), "b a");
  assert.equal(narrowScope("b", "a b"), "b");
});

for (const [requested, allowed] of [["c", "a b"], ["a c", "a b"], ["  ", "a"]] as const) {
  test(`narrowScope refuses ${JSON.stringify(requested)} against ${JSON.stringify(allowed)}`, () => {
    assert.throws(() => narrowScope(requested, allowed), invalidScope);
  });
}
