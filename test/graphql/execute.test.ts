import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { createExecutor } from "../../src/graphql/execute.ts";
import { buildFieldSchema } from "../../src/graphql/schema.ts";

const limits = loadConfig({}).graphql;

test("prepare caches by query text: a repeat returns the same prepared document", () => {
  const executor = createExecutor(buildFieldSchema(), limits);
  const first = executor.prepare("{ fields { total_count } }");
  const second = executor.prepare("{ fields { total_count } }");
  assert.equal(first, second);
  assert.equal(executor.cacheSize(), 1);
});

test("the cache is bounded and evicts the least recently used entry", () => {
  const executor = createExecutor(buildFieldSchema(), limits, 3);
  const a = executor.prepare("{ a: __typename }");
  executor.prepare("{ b: __typename }");
  executor.prepare("{ c: __typename }");
  executor.prepare("{ a: __typename }"); // a is now the most recently used
  executor.prepare("{ d: __typename }"); // evicts b
  assert.equal(executor.cacheSize(), 3);
  assert.equal(executor.prepare("{ a: __typename }"), a);
  const b = executor.prepare("{ b: __typename }");
  assert.notEqual(b, undefined);
  assert.equal(executor.cacheSize(), 3);
});

test("invalid documents are cached with their errors, so repeats skip parse and validate too", () => {
  const executor = createExecutor(buildFieldSchema(), limits);
  const bad = executor.prepare("{ nope }");
  assert.equal(bad.errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  assert.equal(executor.prepare("{ nope }"), bad);
});
