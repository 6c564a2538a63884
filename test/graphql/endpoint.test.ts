import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";
import { BASE } from "../helpers/requests.ts";

const GQL = "application/graphql-response+json";

function rawPost(token: string, body: string, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body,
  });
}

function getRequest(token: string, params: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/graphql?${new URLSearchParams(params)}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
}

interface Row {
  name: string;
  request: (token: string) => Request;
  status: number;
  type?: RegExp;
  code?: string;
  /** Expected top-level OAuth error (for HTTP-level refusals rendered by the app). */
  error?: string;
}

const rows: Row[] = [
  { name: "parse error with application/json is 200", request: (k) => graphqlRequest(k, { query: "{" }), status: 200, type: /^application\/json/, code: "GRAPHQL_PARSE_FAILED" },
  { name: "parse error with graphql-response+json is 400", request: (k) => graphqlRequest(k, { query: "{" }, { accept: GQL }), status: 400, type: /^application\/graphql-response\+json/, code: "GRAPHQL_PARSE_FAILED" },
  { name: "validation error with application/json is 200", request: (k) => graphqlRequest(k, { query: "{ nope }" }), status: 200, code: "GRAPHQL_VALIDATION_FAILED" },
  { name: "validation error with graphql-response+json is 400", request: (k) => graphqlRequest(k, { query: "{ nope }" }, { accept: GQL }), status: 400, code: "GRAPHQL_VALIDATION_FAILED" },
  { name: "unknown operationName with graphql-response+json is 400", request: (k) => graphqlRequest(k, { query: "query A { __typename }", operationName: "B" }, { accept: GQL }), status: 400 },
  { name: "variables that are not an object", request: (k) => graphqlRequest(k, { query: "{ __typename }", variables: [1] }), status: 400, code: "BAD_REQUEST" },
  { name: "operationName that is not a string", request: (k) => graphqlRequest(k, { query: "{ __typename }", operationName: 1 }), status: 400, code: "BAD_REQUEST" },
  { name: "a missing query", request: (k) => graphqlRequest(k, { variables: {} }), status: 400, code: "BAD_REQUEST" },
  { name: "a body that is not a JSON object", request: (k) => graphqlRequest(k, "just a string"), status: 400, code: "BAD_REQUEST" },
  { name: "GET variables that are not JSON", request: (k) => getRequest(k, { query: "{ __typename }", variables: "{" }), status: 400, code: "BAD_REQUEST" },
  { name: "a mutation over GET is 405", request: (k) => getRequest(k, { query: "mutation { __typename }" }), status: 405, code: "METHOD_NOT_ALLOWED" },
  { name: "a named mutation over GET is 405 even when another operation is a query", request: (k) => getRequest(k, { query: "query Q { __typename } mutation M { __typename }", operationName: "M" }), status: 405, code: "METHOD_NOT_ALLOWED" },
  { name: "a mutation over POST is a validation error: the schema has no mutations", request: (k) => graphqlRequest(k, { query: "mutation { __typename }" }, { accept: GQL }), status: 400, code: "GRAPHQL_VALIDATION_FAILED" },
  { name: "a subscription over POST is a validation error: the schema has no subscriptions", request: (k) => graphqlRequest(k, { query: "subscription { __typename }" }), status: 200, code: "GRAPHQL_VALIDATION_FAILED" },
  { name: "a repeated query member is refused, not last-wins", request: (k) => rawPost(k, '{"query":"{ viewer { username } }","query":"{ fields { total_count } }"}'), status: 400, code: "BAD_REQUEST" },
  { name: "a repeated member is refused when written with an escape", request: (k) => rawPost(k, '{"variables":{},"\\u0076ariables":{"crop":"wheat"},"query":"{ __typename }"}'), status: 400, code: "BAD_REQUEST" },
  { name: "form bodies are 415", request: (k) => new Request(`${BASE}/graphql`, { method: "POST", headers: { authorization: `Bearer ${k}`, "content-type": "application/x-www-form-urlencoded" }, body: "query=%7B__typename%7D" }), status: 415, error: "invalid_request" },
  { name: "a body that is not valid UTF-8 is a GraphQL request error", request: (k) => new Request(`${BASE}/graphql`, { method: "POST", headers: { authorization: `Bearer ${k}`, "content-type": "application/json" }, body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }), status: 400, code: "BAD_REQUEST" },
  { name: "a non-UTF-8 charset is 415", request: (k) => graphqlRequest(k, { query: "{ __typename }" }, { "content-type": "application/json; charset=latin1" }), status: 415, error: "invalid_request" },
  { name: "an unacceptable Accept is 406", request: (k) => graphqlRequest(k, { query: "{ __typename }" }, { accept: "text/html" }), status: 406, error: "invalid_request" },
  { name: "a body over the size limit is 413", request: (k) => graphqlRequest(k, { query: `{ __typename }${" ".repeat(70_000)}` }), status: 413, error: "payload_too_large" },
];

for (const row of rows) {
  test(`graphql over http: ${row.name}`, async () => {
    const { t, acmeToken } = await buildWorld();
    const res = await t.app.fetch(row.request(acmeToken));
    assert.equal(res.status, row.status);
    if (row.type) assert.match(res.headers.get("content-type") ?? "", row.type);
    const body = await res.json();
    if (row.error) {
      assert.equal(body.error, row.error);
      return;
    }
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
    assert.ok(!("data" in body), "request errors carry no data entry");
    if (row.code) assert.equal(body.errors[0].extensions.code, row.code);
  });
}

test("a mutation over GET names POST in Allow", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(getRequest(acmeToken, { query: "mutation { __typename }" }));
  assert.equal(res.headers.get("allow"), "POST");
});

test("a mutation is refused before execution with a message naming the missing operation type", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "mutation M { __typename }" }, { accept: GQL }));
  const body = await res.json();
  assert.deepEqual(body, {
    errors: [{
      message: "The schema has no mutation operations",
      locations: [{ line: 1, column: 1 }],
      extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
    }],
  });
});

test("repeated members other than the four parameters are ignored like any unknown member", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(rawPost(acmeToken, '{"query":"{ fields { total_count } }","x":1,"x":2}'));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { data: { fields: { total_count: 7 } } });
});

test("a document too repetitive to validate cheaply is refused before validation with a message that says so", async () => {
  const { t, acmeToken } = await buildWorld();
  // 400 selections of one field: within the token and selection limits, 79 800 pairs for OverlappingFieldsCanBeMerged.
  const query = `{ ${"__typename ".repeat(400)}}`;
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query }, { accept: GQL }));
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.errors[0].extensions.code, "OVERLAP_LIMIT_EXCEEDED");
  assert.match(body.errors[0].message, /select each field once/);
});

/** JSON text of `inner` inside `depth` arrays (or objects), built as text: JSON.stringify overflows long before. */
const deepList = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);
const deepObject = (depth: number, inner = "1") => '{"a":'.repeat(depth) + inner + "}".repeat(depth);
const usedString = "query($c: String) { fields(crop: $c) { total_count } }";

const deepJsonRows = [
  { name: "variables holding a list nested 100 000 levels", body: `{"query":"${usedString}","variables":{"c":${deepList(100_000)}}}`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "variables holding an object nested 100 000 levels", body: `{"query":"${usedString}","variables":{"c":${deepObject(100_000)}}}`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "variables nested one level past the limit", body: `{"query":"${usedString}","variables":{"c":${deepList(256)}}}`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "an undeclared variable nested 3 000 levels", body: `{"query":"{ __typename }","variables":{"c":${deepList(3_000)}}}`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "extensions nested 100 000 levels", body: `{"query":"{ __typename }","extensions":{"c":${deepObject(100_000)}}}`, code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a body that is a list nested 100 000 levels", body: deepList(100_000), code: "BAD_REQUEST" },
  { name: "a body whose query member is nested 100 000 levels", body: `{"query":${deepObject(100_000, '"x"')}}`, code: "BAD_REQUEST" },
];

for (const row of deepJsonRows) {
  test(`graphql over http: ${row.name} is a 400 request error, never a 500`, async () => {
    const { t, acmeToken } = await buildWorld({ FIELDGATE_MAX_BODY_BYTES: "1048576" });
    const res = await t.app.fetch(rawPost(acmeToken, row.body));
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.errors[0].extensions.code, row.code);
  });
}

test("graphql over http: GET variables nested 100 000 levels are a 400 request error", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(getRequest(acmeToken, { query: usedString, variables: `{"c":${deepList(100_000)}}` }));
  assert.equal(res.status, 400);
  assert.equal((await res.json()).errors[0].extensions.code, "NESTING_LIMIT_EXCEEDED");
});

test("graphql over http: variables nested as deep as allowed still run", async () => {
  const { t, acmeToken } = await buildWorld();
  // 255 arrays inside the variables object: 256 levels. Coercion then refuses a list where a String is declared.
  const res = await t.app.fetch(rawPost(acmeToken, `{"query":"${usedString}","variables":{"c":${deepList(255)}}}`));
  assert.equal((await res.json()).errors[0].extensions.code, "BAD_USER_INPUT");
});

test("GET runs queries with variables and operationName from the URL", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(getRequest(acmeToken, {
    query: "query Other { __typename } query Count($crop: String) { fields(crop: $crop) { total_count } }",
    operationName: "Count",
    variables: JSON.stringify({ crop: "wheat" }),
  }));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { data: { fields: { total_count: 7 } } });
});

const acceptRows = [
  { accept: undefined, type: "application/json" },
  { accept: "*/*", type: "application/json" },
  { accept: "application/*", type: "application/json" },
  { accept: GQL, type: GQL },
  { accept: `${GQL}, application/json;q=0.9`, type: GQL },
  { accept: `application/json, ${GQL}`, type: GQL },
  { accept: `${GQL};q=0.5, application/json`, type: "application/json" },
];

for (const row of acceptRows) {
  test(`Accept ${row.accept ?? "(none)"} answers ${row.type}`, async () => {
    const { t, acmeToken } = await buildWorld();
    const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ __typename }" }, row.accept ? { accept: row.accept } : {}));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), `${row.type}; charset=utf-8`);
  });
}

test("graphql responses are never cached", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ fields { total_count } }" }));
  assert.equal(res.headers.get("cache-control"), "no-store");
});

test("PUT /graphql is 405 with Allow", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(new Request(`${BASE}/graphql`, { method: "PUT", headers: { authorization: `Bearer ${acmeToken}` } }));
  assert.equal(res.status, 405);
  assert.match(res.headers.get("allow") ?? "", /POST/);
});

test("a document answered from the cache gets the same answer as when it was first prepared", async () => {
  const { t, acmeToken } = await buildWorld();
  for (let i = 0; i < 2; i++) {
    const mutation = await t.app.fetch(getRequest(acmeToken, { query: "mutation M { __typename }" }));
    assert.equal(mutation.status, 405, `request ${i + 1}`);
    assert.equal(mutation.headers.get("allow"), "POST");
    const query = await t.app.fetch(getRequest(acmeToken, { query: "{ fields { total_count } }" }));
    assert.deepEqual(await query.json(), { data: { fields: { total_count: 7 } } }, `request ${i + 1}`);
  }
});

test("an execution error for a respaced copy of a cached document leaves out the other text's locations", async () => {
  const { t, acmeToken } = await buildWorld();
  const first = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{\n  fields(first: -1) { total_count }\n}" }))).json();
  assert.equal(first.errors[0].extensions.code, "BAD_USER_INPUT");
  assert.deepEqual(first.errors[0].locations, [{ line: 2, column: 3 }]);
  const copy = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{ fields(first: -1) { total_count } }" }))).json();
  assert.equal(copy.errors[0].extensions.code, "BAD_USER_INPUT");
  assert.deepEqual(copy.errors[0].path, ["fields"]);
  assert.equal(copy.errors[0].locations, undefined);
});
