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

const rows = [
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
