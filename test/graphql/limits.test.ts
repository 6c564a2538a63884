import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { getIntrospectionQuery } from "graphql";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";

const GQL = "application/graphql-response+json";

const deep = "{ fields { nodes { organization { fields { nodes { organization { fields { nodes { organization { fields { nodes { id } } } } } } } } } } } }";
const costly = "{ fields(first: 100) { nodes { organization { fields(first: 100) { nodes { id name } } } } } }";
const aliased = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(" ")} }`;
const longQuery = `{ ${"__typename ".repeat(2_001)}}`;
const fragmentBomb = [
  "query { fields { nodes { ...F0 } } }",
  ...Array.from({ length: 30 }, (_, i) => `fragment F${i} on Field { organization { fields { nodes { ...F${i + 1} } } } }`),
  "fragment F30 on Field { id }",
].join("\n");

// The standard introspection fragments (FullType, InputValue, TypeRef), as GraphiQL and codegen tools send them.
const standard = getIntrospectionQuery();
const introspectionFragments = standard.slice(standard.indexOf("fragment FullType"));
const schemaFlood = `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: __schema { types { ...FullType } }`).join(" ")} }
${introspectionFragments}`;
// Costs 2 + 100 * (3 + 45) = 4 802 of 5 000: passes alone, not beside an introspection entry point's fixed price.
const nearLimit = "fields(first: 100) { nodes { organization { fields(first: 45) { nodes { id } } } } }";
// 4 600 boundaries: cost 4 902 when a boundary cost 1 like any leaf, 92 302 at its weight of 20.
const nestedBoundaries = "{ fields(first: 100) { nodes { organization { fields(first: 46) { nodes { boundary } } } } } }";
// 300 boundaries through a named and an inline fragment: 306 at 1, 6 006 at 20.
const boundaryFragments = `{ a: fields(first: 100) { nodes { ...B } } b: fields(first: 100) { nodes { ...B } }
  c: fields(first: 100) { nodes { ... on Field { boundary } } } } fragment B on Field { boundary }`;
const typeLookups = Array.from({ length: 4 }, (_, i) => `t${i}: __type(name: "Field") { name }`).join(" ");

/** `open` repeated `n` times around `inner`, closed by `close` repeated as often. */
const nest = (n: number, open: string, inner: string, close: string) => open.repeat(n) + inner + close.repeat(n);
const repeated = (n: number, selection: string) => `{ ${`${selection} `.repeat(n)}}`;

const rows = [
  { name: "a 6 KB list argument nested 3 000 levels", query: `{ fields(crop: ${nest(3_000, "[", '"x"', "]")}) { total_count } }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "an object argument nested 3 000 levels", query: `{ fields(crop: ${nest(3_000, "{a:", '"x"', "}")}) { total_count } }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a directive argument nested 3 000 levels", query: `{ fields @include(if: ${nest(3_000, "[", "true", "]")}) { total_count } }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a variable type nested 3 000 levels", query: `query($c: ${nest(3_000, "[", "String", "]")}) { __typename }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "selection sets nested 3 000 levels", query: nest(3_000, "{ viewer ", "id", "}"), code: "NESTING_LIMIT_EXCEEDED" },
  { name: "inline fragments nested 3 000 levels", query: `{ ${nest(3_000, "... on Query { ", "__typename", " }")} }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "284 copies of organizations { fields { total_count } }", query: repeated(284, "organizations { fields { total_count } }"), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "284 copies of fields { page_info { has_next_page } }", query: repeated(284, "fields { page_info { has_next_page } }"), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "46 copies of organizations { id }", query: repeated(46, "organizations { id }"), code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "a query deeper than maxDepth", query: deep, code: "DEPTH_LIMIT_EXCEEDED" },
  { name: "a query costlier than maxCost", query: costly, code: "COST_LIMIT_EXCEEDED" },
  { name: "more aliases than maxAliases", query: aliased, code: "ALIAS_LIMIT_EXCEEDED" },
  { name: "more tokens than maxTokens", query: longQuery, code: "TOKEN_LIMIT_EXCEEDED" },
  { name: "a fragment chain that nests deeper than allowed", query: fragmentBomb, code: "DEPTH_LIMIT_EXCEEDED" },
  { name: "30 aliased __schema selections of the standard FullType fragment", query: schemaFlood, code: "COST_LIMIT_EXCEEDED" },
  { name: "__schema twice under one response key", query: "{ __schema { queryType { name } } __schema { types { name } } }", code: "COST_LIMIT_EXCEEDED" },
  {
    name: "__schema through two fragments",
    query: "{ ...A ...B } fragment A on Query { a: __schema { queryType { name } } } fragment B on Query { b: __schema { types { name } } }",
    code: "COST_LIMIT_EXCEEDED",
  },
  { name: "one fragment with __schema spread twice", query: "{ ...A ...A } fragment A on Query { __schema { queryType { name } } }", code: "COST_LIMIT_EXCEEDED" },
  { name: "__schema in an inline fragment and directly", query: "{ ... on Query { __schema { queryType { name } } } s: __schema { types { name } } }", code: "COST_LIMIT_EXCEEDED" },
  { name: "__schema beside a selection costing just under the limit", query: `{ __schema { queryType { name } } ${nearLimit} }`, code: "COST_LIMIT_EXCEEDED" },
  { name: "four __type lookups beside a selection costing just under the limit", query: `{ ${typeLookups} ${nearLimit} }`, code: "COST_LIMIT_EXCEEDED" },
  { name: "4 600 boundaries through organization.fields", query: nestedBoundaries, code: "COST_LIMIT_EXCEEDED" },
  { name: "300 boundaries through fragments", query: boundaryFragments, code: "COST_LIMIT_EXCEEDED" },
  { name: "recursive introspection", query: "{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }", code: "GRAPHQL_VALIDATION_FAILED" },
];

for (const row of rows) {
  test(`graphql refuses ${row.name} with ${row.code}, never a 500`, async () => {
    const { t, acmeToken } = await buildWorld();
    const json = await t.app.fetch(graphqlRequest(acmeToken, { query: row.query }));
    assert.equal(json.status, 200);
    const body = await json.json();
    assert.equal(body.errors[0].extensions.code, row.code);
    assert.ok(!("data" in body));
    const strict = await t.app.fetch(graphqlRequest(acmeToken, { query: row.query }, { accept: GQL }));
    assert.equal(strict.status, 400);
  });
}

/** A chain of `n` + 1 fragments on Query, each spreading the next inside `wrap` levels of `viewer { }`. */
const fragmentChain = (n: number, wrap = 0) => ["{ ...F0 }",
  ...Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ${"viewer { ".repeat(wrap)}...F${i + 1}${" }".repeat(wrap)} }`),
  `fragment F${n} on Query { __typename }`].join("\n");

// With the token limit at its highest setting, nothing but the nesting and selection limits stands before recursion.
const manyTokenRows = [
  { name: "selection sets nested 20 000 levels", query: nest(20_000, "{ viewer ", "id", "}"), code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a list argument nested 90 000 levels", query: `{ fields(crop: ${nest(45_000, "[", '"x"', "]")}) { total_count } }`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a chain of 90 fragments nesting three levels each", query: fragmentChain(89, 2), code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a chain of 300 fragment spreads", query: fragmentChain(300), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "a chain of 10 000 fragment spreads", query: fragmentChain(10_000), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "a fragment cycle through 400 fragments", query: fragmentChain(400).replace("fragment F400 on Query { __typename }", "fragment F400 on Query { ...F0 }"), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "a fragment cycle nesting through 90 fragments", query: fragmentChain(89, 2).replace("fragment F89 on Query { __typename }", "fragment F89 on Query { ...F0 }"), code: "NESTING_LIMIT_EXCEEDED" },
  { name: "30 000 copies of __typename", query: repeated(30_000, "__typename"), code: "SELECTION_LIMIT_EXCEEDED" },
];

for (const row of manyTokenRows) {
  test(`graphql refuses ${row.name} with ${row.code} under a 100 000-token limit, never a 500`, async () => {
    const { t, acmeToken } = await buildWorld({ FIELDGATE_GRAPHQL_MAX_TOKENS: "100000", FIELDGATE_MAX_BODY_BYTES: "1048576" });
    const res = await t.app.fetch(graphqlRequest(acmeToken, { query: row.query }));
    assert.equal(res.status, 200);
    assert.equal((await res.json()).errors[0].extensions.code, row.code);
  });
}

test("the documentation's example queries pass every limit", async () => {
  const { t, acmeToken } = await buildWorld();
  const examples = [
    { query: `query Page($after: String) { fields(first: 100, after: $after) { total_count page_info { has_next_page end_cursor }
      nodes { id name area_ha crop season centroid { longitude latitude } boundary updated_at organization { slug } } } }`, variables: {} },
    { query: "{ viewer { username is_integration application { client_id name } organizations { id name } } }" },
    { query: "query($org: ID!) { fields(organization_id: $org, crop: \"wheat\") { total_count } }", variables: { org: "x" } },
  ];
  for (const example of examples) {
    const res = await t.app.fetch(graphqlRequest(acmeToken, example));
    const body = await res.json();
    assert.equal(body.errors?.find((e: { extensions: { code: string } }) => e.extensions.code !== "BAD_USER_INPUT"), undefined, example.query);
  }
});

test("a page built from UI component fragments, each adding id and __typename, passes every limit", async () => {
  const { t, acmeToken } = await buildWorld();
  const names = ["name", "area_ha", "crop", "season", "boundary", "created_at", "updated_at", "centroid { latitude }"];
  const fragments = names.map((field, i) => `fragment C${i} on Field { __typename id ${field} }`).join("\n");
  const query = `{ fields(first: 100) { __typename total_count nodes { __typename id ${names.map((_, i) => `...C${i}`).join(" ")} } } }\n${fragments}`;
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query }))).json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  assert.equal(body.data.fields.nodes.length, 7);
});

test("limits follow configuration", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_GRAPHQL_MAX_DEPTH: "2", FIELDGATE_GRAPHQL_MAX_ALIASES: "0" });
  const ok = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{ fields { total_count } }" }))).json();
  assert.deepEqual(ok, { data: { fields: { total_count: 7 } } });
  const deep3 = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{ fields { nodes { id } } }" }))).json();
  assert.equal(deep3.errors[0].extensions.code, "DEPTH_LIMIT_EXCEEDED");
  const alias = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{ a: __typename }" }))).json();
  assert.equal(alias.errors[0].extensions.code, "ALIAS_LIMIT_EXCEEDED");
});

test("the standard introspection query passes every limit", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true });
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query }));
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.equal(body.errors, undefined);
  assert.equal(body.data.__schema.queryType.name, "Query");
});

test("a repeated __schema is refused with a message that names it", async () => {
  const { t, acmeToken } = await buildWorld();
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query: schemaFlood }))).json();
  assert.equal(body.errors[0].extensions.code, "COST_LIMIT_EXCEEDED");
  assert.match(body.errors[0].message, /__schema 30 times; it may be selected once per operation/);
});

test("the queries the introspection and boundary rows refuse pass without their extra selections", async () => {
  const { t, acmeToken } = await buildWorld();
  const queries = [
    `{ __typename ${nearLimit} }`,
    `{ t0: __type(name: "Field") { name } ${nearLimit.replace("first: 45", "first: 44")} }`,
    `{ s0: __schema { types { ...FullType } } }\n${introspectionFragments}`,
    "{ ...A } fragment A on Query { a: __schema { queryType { name } } }",
    nestedBoundaries.replace("boundary", "id"),
    // Two pages of 100 boundaries, one through each kind of fragment: 2 × 2 002.
    "{ a: fields(first: 100) { nodes { ...B } } b: fields(first: 100) { nodes { ... on Field { boundary } } } } fragment B on Field { boundary }",
  ];
  for (const query of queries) {
    const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query }))).json();
    assert.equal(body.errors, undefined, `${query.slice(0, 60)}: ${JSON.stringify(body.errors)}`);
  }
});

test("__schema is counted per operation: each operation of a document may select it once", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = "query A { __schema { queryType { name } } } query B { __schema { types { name } } }";
  for (const operationName of ["A", "B"]) {
    const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query, operationName }))).json();
    assert.equal(body.errors, undefined);
    assert.ok(body.data.__schema);
  }
});

test("a full page of fields with every attribute stays within the default cost", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = `{ fields(first: 100) { total_count page_info { has_next_page end_cursor } edges { cursor node {
    id name area_ha crop season boundary centroid { longitude latitude } created_at updated_at organization { id slug name } } } } }`;
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query }))).json();
  assert.equal(body.errors, undefined);
  assert.equal(body.data.fields.edges.length, 7);
});
