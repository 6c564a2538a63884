import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";

test("an unexpected resolver failure is logged with the request id and answered generically", async () => {
  const { t, acmeToken } = await buildWorld();
  t.store.fields.count = async () => {
    throw new Error("SQLITE_ERROR: no such column: secret_column in SELECT COUNT(*) FROM fields");
  };
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ fields { total_count } }" }, { "x-request-id": "req-42" }));
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.doesNotMatch(text, /SQLITE|secret_column|SELECT|at .*\.ts/);
  const body = JSON.parse(text);
  assert.equal(body.data, null);
  assert.deepEqual(body.errors, [{
    message: "Internal server error",
    locations: [{ line: 1, column: 12 }],
    path: ["fields", "total_count"],
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  }]);
  const logged = t.log.find((line) => line.event === "graphql_error");
  assert.ok(logged, "the failure is logged");
  assert.equal(logged.fields.request_id, "req-42");
  assert.equal(logged.fields.path, "fields.total_count");
  assert.match(String(logged.fields.error), /no such column/);
});

test("a partial failure keeps the data that resolved", async () => {
  const { t, acmeToken } = await buildWorld();
  t.store.users.findById = async () => {
    throw new TypeError("boom");
  };
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "{ viewer { username name } fields { total_count } }" }))).json();
  assert.equal(body.data.fields.total_count, 7);
  assert.equal(body.data.viewer.name, null);
  assert.equal(body.errors[0].extensions.code, "INTERNAL_SERVER_ERROR");
  assert.equal(body.errors[0].message, "Internal server error");
});

test("variable coercion errors keep graphql-js's message and get a code", async () => {
  const { t, acmeToken } = await buildWorld();
  const body = await (await t.app.fetch(graphqlRequest(acmeToken, { query: "query($n: Int) { fields(first: $n) { total_count } }", variables: { n: "x" } }))).json();
  assert.ok(!("data" in body));
  assert.match(body.errors[0].message, /\$n/);
  assert.equal(body.errors[0].extensions.code, "BAD_USER_INPUT");
});
