import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { decodeCursor, encodeCursor, globalId, parseGlobalId } from "../../src/graphql/cursor.ts";

test("cursors and global ids round-trip", () => {
  for (const id of [1, 42, 999_999_999_999]) {
    assert.equal(decodeCursor(encodeCursor(id)), id);
    assert.equal(parseGlobalId("Field", globalId("Field", id)), id);
  }
});

const badCursors = ["", "=", "%%", "Y3Vyc29yOnYxOjA", "Y3Vyc29yOnYxOi0x", "Y3Vyc29yOnYxOjE=", "RmllbGQ6MQ", "x".repeat(100)];

for (const cursor of badCursors) {
  test(`decodeCursor refuses ${JSON.stringify(cursor.slice(0, 20))}`, () => {
    assert.throws(() => decodeCursor(cursor), (error: Error & { extensions?: { code?: string } }) => error.extensions?.code === "BAD_USER_INPUT");
  });
}

test("a global id of one type is not accepted as another", () => {
  assert.throws(() => parseGlobalId("Field", globalId("Organization", 1)));
  assert.throws(() => parseGlobalId("Organization", globalId("Field", 1)));
});
