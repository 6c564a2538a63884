import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { Location, Token, validate } from "graphql";
import { loadConfig } from "../../src/config.ts";
import { createExecutor, operationTypeOf, type Prepared } from "../../src/graphql/execute.ts";
import { buildFieldSchema } from "../../src/graphql/schema.ts";

const limits = loadConfig({}).graphql;

/** Bounds small enough to reach in a test: 3 entries, 100 characters, 40 per entry. */
const small = { maxEntries: 3, maxChars: 100, maxEntryChars: 40 };

/** A valid query of exactly `length` characters (at least 20); `tag`, an alias, makes it distinct. */
function queryOf(length: number, tag: string): string {
  const head = `{ ${tag}: __typename }`;
  return head + " ".repeat(length - head.length);
}

test("prepare caches by query text: a repeat returns the same prepared document", () => {
  const executor = createExecutor(buildFieldSchema(), limits);
  const first = executor.prepare("{ fields { total_count } }");
  const second = executor.prepare("{ fields { total_count } }");
  assert.equal(first, second);
  assert.equal(executor.cacheSize(), 1);
  assert.equal(executor.cacheChars(), "{ fields { total_count } }".length);
});

test("the cache is bounded and evicts the least recently used entry", () => {
  const executor = createExecutor(buildFieldSchema(), limits, { cache: { ...small, maxChars: 1_000 } });
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

test("the cache evicts least recently used entries until a new text fits the character budget", () => {
  const executor = createExecutor(buildFieldSchema(), limits, { cache: { ...small, maxEntries: 500 } });
  const a = executor.prepare(queryOf(40, "A"));
  const b = executor.prepare(queryOf(30, "B"));
  executor.prepare(queryOf(20, "C"));
  assert.equal(executor.prepare(queryOf(40, "A")), a); // a is now the most recently used: b goes first
  executor.prepare(queryOf(35, "D")); // 90 + 35 > 100: evicts b (30), then 95 fits
  assert.equal(executor.cacheSize(), 3);
  assert.equal(executor.cacheChars(), 95);
  assert.equal(executor.prepare(queryOf(40, "A")), a);
  assert.notEqual(executor.prepare(queryOf(30, "B")), b, "b was evicted and prepared anew");
  assert.ok(executor.cacheChars() <= small.maxChars);
});

test("a text over the per-entry cap is prepared for its request but not cached", () => {
  const executor = createExecutor(buildFieldSchema(), limits, { cache: small });
  const long = queryOf(41, "L");
  const first = executor.prepare(long);
  assert.ok(first.document, "the long query still runs");
  assert.equal(first.errors, undefined);
  assert.equal(executor.cacheSize(), 0);
  assert.equal(executor.cacheChars(), 0);
  assert.notEqual(executor.prepare(long), first);
  executor.prepare(queryOf(40, "E")); // exactly at the cap: cached
  assert.equal(executor.cacheSize(), 1);
});

test("the cache never holds more characters or entries than its bounds, whatever the order of texts", () => {
  const executor = createExecutor(buildFieldSchema(), limits, { cache: small });
  // A fixed pseudo-random walk over 12 texts of 20 to 45 characters, repeats included, so hits and evictions mix.
  let seed = 7;
  for (let i = 0; i < 400; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const n = seed % 12;
    executor.prepare(queryOf(20 + ((n * 7) % 26), `Q${n}`));
    assert.ok(executor.cacheChars() <= small.maxChars, `step ${i}: ${executor.cacheChars()} characters`);
    assert.ok(executor.cacheSize() <= small.maxEntries, `step ${i}: ${executor.cacheSize()} entries`);
  }
});

test("invalid documents are cached with their errors, so repeats skip parse and validate too", () => {
  const executor = createExecutor(buildFieldSchema(), limits);
  const bad = executor.prepare("{ nope }");
  assert.equal(bad.errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  assert.equal(executor.prepare("{ nope }"), bad);
});

/** True when anything reachable from `value` is a graphql-js AST node, Location or Token. */
function holdsAst(value: unknown, seen = new Set<unknown>()): boolean {
  if (typeof value !== "object" || value === null || seen.has(value)) return false;
  seen.add(value);
  if (value instanceof Location || value instanceof Token || "kind" in value || "loc" in value) return true;
  return Object.values(value).some((child) => holdsAst(child, seen));
}

const refused = [
  { name: "a parse failure", query: "mutation M { __typename", code: "GRAPHQL_PARSE_FAILED" },
  { name: "a validation failure", query: `query Q { nope } mutation M { __typename }`, code: "GRAPHQL_VALIDATION_FAILED" },
  { name: "a limit failure", query: `query Q { ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(" ")} }`, code: "ALIAS_LIMIT_EXCEEDED" },
];

for (const row of refused) {
  test(`${row.name} is cached as its errors and operations only, without the AST`, () => {
    const executor = createExecutor(buildFieldSchema(), limits);
    const prepared: Prepared = executor.prepare(row.query);
    assert.equal(prepared.errors?.[0]?.extensions?.code, row.code);
    // Booleans, not the values: on failure node:assert would diff a whole AST with its circular token list for minutes.
    assert.ok(prepared.document === undefined, "a refused document keeps no document");
    assert.ok(!holdsAst(prepared), "nothing a refused entry holds is an AST node, Location or Token");
    assert.equal(executor.prepare(row.query), prepared);
  });
}

/** An executor whose validate calls are counted. */
function countingExecutor() {
  const calls = { validate: 0 };
  const counted: typeof validate = (...args) => {
    calls.validate++;
    return validate(...args);
  };
  return { executor: createExecutor(buildFieldSchema(), limits, { validate: counted }), calls };
}

const costly = "{ fields(first: 100) { nodes { organization { fields(first: 100) { nodes { id name } } } } } }";
const respaced = "{\n  fields(first: 100) {\n    nodes { organization { fields(first: 100), { nodes { id, name } } } } # again\n  }\n}\n";

test("a refused document is served from the cache when sent again, respaced or not, without validating it again", () => {
  const { executor, calls } = countingExecutor();
  assert.equal(executor.prepare(costly).errors?.[0]?.extensions?.code, "COST_LIMIT_EXCEEDED");
  assert.equal(calls.validate, 1);
  assert.equal(executor.prepare(costly).errors?.[0]?.extensions?.code, "COST_LIMIT_EXCEEDED");
  assert.equal(executor.prepare(respaced).errors?.[0]?.extensions?.code, "COST_LIMIT_EXCEEDED");
  assert.equal(calls.validate, 1);
  assert.equal(executor.cacheSize(), 1);
});

test("a document refused before validation is cached too and never reaches validate", () => {
  const { executor, calls } = countingExecutor();
  const query = `{ ${"organizations { fields { total_count } } ".repeat(284)}}`;
  for (const text of [query, query.replaceAll("} }", "}  }"), ` ${query}`]) {
    assert.equal(executor.prepare(text).errors?.[0]?.extensions?.code, "SELECTION_LIMIT_EXCEEDED");
  }
  assert.equal(calls.validate, 0);
  assert.equal(executor.cacheSize(), 1);
});

test("a valid document respaced is the same cached document", () => {
  const { executor, calls } = countingExecutor();
  const first = executor.prepare("{ fields { total_count } }");
  const second = executor.prepare("query {\n  fields { total_count }\n}".replace("query ", ""));
  assert.equal(second.document, first.document);
  assert.equal(calls.validate, 1);
});

test("whitespace inside string literals keeps documents apart in the cache", () => {
  const { executor, calls } = countingExecutor();
  executor.prepare('{ fields(crop: "a b") { total_count } }');
  executor.prepare('{ fields(crop: "a  b") { total_count } }');
  executor.prepare('{ fields(crop: """a\n b""") { total_count } }');
  executor.prepare('{ fields(crop: """a b""") { total_count } }');
  assert.equal(calls.validate, 4);
  assert.equal(executor.cacheSize(), 4);
});

test("errors carry locations for the text that was parsed, and none for a respaced copy of it", () => {
  const { executor } = countingExecutor();
  const text = "{\n  nope\n}";
  assert.deepEqual(executor.prepare(text).errors?.[0]?.locations, [{ line: 2, column: 3 }]);
  const other = executor.prepare("{ nope }");
  assert.equal(other.errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
  assert.equal(other.errors?.[0]?.locations, undefined);
  assert.equal(other.otherText, true);
  assert.deepEqual(executor.prepare(text).errors?.[0]?.locations, [{ line: 2, column: 3 }]);
});

test("operationTypeOf picks the operation as getOperationAST does, also for refused documents", () => {
  const executor = createExecutor(buildFieldSchema(), limits);
  const two = executor.prepare("query Q { nope } mutation M { __typename }");
  assert.equal(operationTypeOf(two, "M"), "mutation");
  assert.equal(operationTypeOf(two, "Q"), "query");
  assert.equal(operationTypeOf(two, undefined), undefined, "two operations and no name select none");
  assert.equal(operationTypeOf(two, "X"), undefined);
  assert.equal(operationTypeOf(executor.prepare("subscription { __typename }"), undefined), "subscription");
  assert.equal(operationTypeOf(executor.prepare("{ __typename"), undefined), undefined, "nothing parsed, nothing selected");
});
