import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { openTestApp } from "../helpers/test_app.ts";
import { BASE } from "../helpers/requests.ts";
import { clientCredentials } from "./grants.ts";
import { RUNS, assertNoServerErrors, assertStillHealthy, contentType, hostileBody, hostileQuery, hostileString, jsonBody } from "./hostile.ts";

const selection = fc.constantFrom(
  "total_count", "edges { node { id name area_ha } }", "viewer { username scopes }", "__typename",
  "organizations { id name }", "__schema { types { name fields { name } } }", "pageInfo { hasNextPage endCursor }",
);

/** `open` `n` times around `inner`, then `close` as often: what recursive parsers and walkers descend into. */
const nested = (n: number, open: string, inner: string, close: string) => open.repeat(n) + inner + close.repeat(n);

/** A chain of `n` fragments, each spreading the next, optionally closed into a cycle. */
const fragmentChain = (n: number, cycle: boolean) =>
  ["{ ...F0 }", ...Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ...F${i + 1} }`),
    `fragment F${n} on Query { ${cycle ? "...F0" : "__typename"} }`].join(" ");

/** Documents nested 1 to 5 000 levels through every construct graphql-js parses or walks by recursion. */
const deepQuery: fc.Arbitrary<string> = fc.integer({ min: 1, max: 5_000 }).chain((n) =>
  fc.constantFrom(
    `{ fields(crop: ${nested(n, "[", '"x"', "]")}) { total_count } }`,
    `{ fields(crop: ${nested(n, "{a:", '"x"', "}")}) { total_count } }`,
    `{ fields(crop: ${nested(n, "{a:[", '"x"', "]}")}) { total_count } }`,
    `{ fields @include(if: ${nested(n, "[", "true", "]")}) { total_count } }`,
    `query($c: ${nested(n, "[", "String", "]")}) { __typename }`,
    nested(n, "{ viewer ", "id", "}"),
    `{ ${nested(n, "... on Query { ", "__typename", " }")} }`,
    `{ ${nested(n, "... @skip(if: false) { ", "__typename", " }")} }`,
    fragmentChain(Math.min(n, 1_500), false),
    fragmentChain(Math.min(n, 1_500), true),
    `{ ${"organizations { fields { total_count } } ".repeat(n)}}`,
    `{ ${"__typename ".repeat(n)}}`,
  )
);

/** Queries built to hurt: deep nesting, alias floods, fragment cycles, huge literals, directive spam, bad syntax. */
const absurdQuery: fc.Arbitrary<string> = fc.oneof(
  deepQuery,
  fc.integer({ min: 1, max: 3_000 }).map((n) => `{ ${"viewer { organizations { ".repeat(n)}id${" } }".repeat(n)} }`),
  fc.integer({ min: 1, max: 3_000 }).map((n) => `{ ${"{".repeat(n)}${"}".repeat(n)} }`),
  fc.integer({ min: 1, max: 5_000 }).chain((n) => selection.map((s) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: fields(first: 100) { ${s} }`).join(" ")} }`)),
  fc.constant("query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }"),
  fc.constant("query { fields { ...F } } fragment F on FieldConnection { ...F }"),
  fc.integer({ min: 1, max: 2_000 }).map((n) => `{ fields ${"@include(if: true) ".repeat(n)} { total_count } }`),
  fc.integer({ min: 1, max: 60_000 }).map((n) => `{ field(id: "${"x".repeat(n)}") { id } }`),
  fc.constant("{ fields(first: 2147483648) { total_count } }"),
  fc.constant("{ fields(first: -1) { total_count } }"),
  fc.constant("mutation { x }"),
  fc.constant("subscription { fields { total_count } }"),
  fc.constant("query A { viewer { id } } query A { viewer { id } }"),
  fc.constant('{ __type(name: "Query") { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } }'),
  selection.map((s) => `{ fields { ${s} } }`),
  hostileString,
);

const variables = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);

/** GraphQL over HTTP result or HTTP-level refusal: {data}, {errors: [{message}]} or an RFC 6750 {error}. */
async function assertGraphqlShape(res: Response): Promise<void> {
  assert.ok(res.status < 500, `5xx: ${res.status}`);
  assert.equal(res.headers.get("location"), null);
  if (res.status === 204 || res.status === 405 && res.headers.get("content-length") === "0") return;
  const body = await jsonBody(res);
  if ("error" in body) {
    assert.equal(typeof body.error, "string");
    assert.ok(res.status >= 400);
    if (res.status === 401) assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer /);
    return;
  }
  assert.ok("data" in body || "errors" in body, `neither data nor errors: ${JSON.stringify(body).slice(0, 200)}`);
  if ("errors" in body) {
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
    for (const e of body.errors as unknown[]) assert.equal(typeof (e as { message?: unknown }).message, "string");
  }
}

test("/graphql answers absurd queries and variables with GraphQL errors or data, never a 5xx", async () => {
  const t = await openTestApp();
  await t.seed.fields(3);
  const token = await clientCredentials((r) => t.app.fetch(r), await t.seed.client({ grant: "client_credentials" }));
  const request = fc.record({
    query: absurdQuery,
    variables,
    operationName: fc.option(fc.oneof(fc.constant("A"), hostileString), { nil: undefined }),
    accept: fc.constantFrom(undefined, "application/json", "application/graphql-response+json", "text/html", "*/*"),
  });
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${token}` };
      if (r.accept) headers.accept = r.accept;
      const body = JSON.stringify({ query: r.query, variables: r.variables, operationName: r.operationName });
      await assertGraphqlShape(await t.app.fetch(new Request(`${BASE}/graphql`, { method: "POST", headers, body })));
    }),
    { numRuns: RUNS },
  );
  assertNoServerErrors(t);
  await assertStillHealthy(t);
});

/** JSON text nested `depth` levels of arrays or objects, written as text: JSON.stringify itself overflows on it. */
const deepJsonText: fc.Arbitrary<string> = fc.integer({ min: 1, max: 100_000 }).chain((depth) =>
  fc.constantFrom(nested(depth, "[", "1", "]"), nested(depth, '{"a":', '"x"', "}"), nested(depth, '[{"a":', "null", "}]"))
);

test("/graphql answers variables, extensions and bodies nested up to 100 000 levels without a 5xx, under every limit setting", async () => {
  const t = await openTestApp({ FIELDGATE_MAX_BODY_BYTES: "16777216", FIELDGATE_GRAPHQL_MAX_TOKENS: "100000" });
  const token = await clientCredentials((r) => t.app.fetch(r), await t.seed.client({ grant: "client_credentials" }));
  const request = fc.record({
    json: deepJsonText,
    query: fc.oneof(fc.constantFrom("query($c: String) { fields(crop: $c) { total_count } }", "{ __typename }"), deepQuery),
    place: fc.constantFrom("variables", "extensions", "body", "query", "get"),
  });
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const query = JSON.stringify(r.query);
      const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
      const body = r.place === "body" ? r.json : r.place === "query" ? `{"query":${r.json}}` : `{"query":${query},"${r.place}":{"c":${r.json}}}`;
      const res = r.place === "get"
        ? await t.app.fetch(new Request(`${BASE}/graphql?${new URLSearchParams({ query: r.query, variables: `{"c":${r.json}}` })}`, { headers }))
        : await t.app.fetch(new Request(`${BASE}/graphql`, { method: "POST", headers, body }));
      await assertGraphqlShape(res);
    }),
    { numRuns: Math.max(20, Math.floor(RUNS / 5)) },
  );
  assertNoServerErrors(t);
  await assertStillHealthy(t);
});

test("/graphql answers hostile bodies, Content-Types, methods, queries and Authorization headers without a 5xx", async () => {
  const t = await openTestApp();
  const token = await clientCredentials((r) => t.app.fetch(r), await t.seed.client({ grant: "client_credentials" }));
  const ascii = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, "x"));
  const request = fc.record({
    method: fc.constantFrom("POST", "POST", "GET", "OPTIONS", "PUT"),
    body: hostileBody(fc.oneof(hostileString, absurdQuery)),
    type: contentType,
    query: fc.oneof(fc.constant(""), hostileQuery, absurdQuery.map((q) => `query=${encodeURIComponent(q.replace(/[\ud800-\udfff]/g, "?"))}`)),
    authorization: fc.oneof(fc.constant(`Bearer ${token}`), fc.constant(undefined), ascii.map((s) => `Bearer ${s}`), ascii),
  });
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const headers = new Headers();
      if (r.type !== undefined) headers.set("content-type", r.type);
      if (r.authorization !== undefined) headers.set("authorization", r.authorization);
      const hasBody = r.method !== "GET";
      const res = await t.app.fetch(new Request(`${BASE}/graphql${r.query ? `?${r.query}` : ""}`, {
        method: r.method,
        headers,
        body: hasBody ? r.body as BodyInit : undefined,
      }));
      await assertGraphqlShape(res);
    }),
    { numRuns: RUNS },
  );
  assertNoServerErrors(t);
  await assertStillHealthy(t);
});
