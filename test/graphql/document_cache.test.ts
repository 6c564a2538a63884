import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createTextCache } from "../../src/graphql/document_cache.ts";

test("a hit marks the entry most recently used, so the character budget evicts the others first", () => {
  const cache = createTextCache<number>({ maxEntries: 10, maxChars: 6, maxEntryChars: 3 });
  cache.set("aa", 1);
  cache.set("bb", 2);
  cache.set("cc", 3);
  assert.equal(cache.get("aa"), 1);
  cache.set("ddd", 4); // 6 + 3 > 6: evicts bb, then cc
  assert.equal(cache.get("bb"), undefined);
  assert.equal(cache.get("cc"), undefined);
  assert.equal(cache.get("aa"), 1);
  assert.equal(cache.get("ddd"), 4);
  assert.equal(cache.chars(), 5);
  assert.equal(cache.size(), 2);
});

test("setting a text already kept neither counts it twice nor replaces it", () => {
  const cache = createTextCache<number>({ maxEntries: 10, maxChars: 6, maxEntryChars: 3 });
  cache.set("aa", 1);
  cache.set("aa", 2);
  assert.equal(cache.get("aa"), 1);
  assert.equal(cache.chars(), 2);
});

const badBounds = [
  { name: "no entries", bounds: { maxEntries: 0, maxChars: 10, maxEntryChars: 5 } },
  { name: "a per-entry cap over the total", bounds: { maxEntries: 10, maxChars: 10, maxEntryChars: 11 } },
  { name: "a per-entry cap of 0", bounds: { maxEntries: 10, maxChars: 10, maxEntryChars: 0 } },
];

for (const row of badBounds) {
  test(`cache bounds with ${row.name} are a RangeError`, () => {
    assert.throws(() => createTextCache(row.bounds), RangeError);
  });
}
