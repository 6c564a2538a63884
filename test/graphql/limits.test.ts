import { test } from "node:test";
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

const rows = [
  { name: "a query deeper than maxDepth", query: deep, code: "DEPTH_LIMIT_EXCEEDED" },
  { name: "a query costlier than maxCost", query: costly, code: "COST_LIMIT_EXCEEDED" },
  { name: "more aliases than maxAliases", query: aliased, code: "ALIAS_LIMIT_EXCEEDED" },
  { name: "more tokens than maxTokens", query: longQuery, code: "TOKEN_LIMIT_EXCEEDED" },
  { name: "a fragment chain that nests deeper than allowed", query: fragmentBomb, code: "DEPTH_LIMIT_EXCEEDED" },
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

test("a full page of fields with every attribute stays within the default cost", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = `{ fields(first: 100) { total_count page_info { has_next_page end_cursor } edges { cursor node {
    id name area_ha crop season boundary centroid { longitude latitude } created_at updated_at organization { id slug name } } } } }`;
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query }))).json();
  assert.equal(body.errors, undefined);
  assert.equal(body.data.fields.edges.length, 7);
});
