// GraphQL ids and cursors through /graphql: opaque, stable across a restart, refused when forged or altered.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { at, buildWorld, gql, listAt, type GqlBody } from "../helpers/graphql.ts";
import { openTestApp } from "../helpers/test_app.ts";
import { tempDb } from "../helpers/temp_db.ts";

// acme (org 1) has fields 1..7, globex (org 2) fields 8..11; the acme token acts as acme's integration user.
const EVERY_ID = `{
  viewer { id }
  organizations { id }
  fields(first: 100) { nodes { id } edges { cursor } page_info { end_cursor } }
}`;

/** Every id and cursor in a response to EVERY_ID, in a fixed order. */
function idsIn(body: GqlBody): string[] {
  const data = body.data;
  return [
    String(at(data, "viewer", "id")),
    ...listAt(data, "organizations").map((o) => String(at(o, "id"))),
    ...listAt(data, "fields", "nodes").map((n) => String(at(n, "id"))),
    ...listAt(data, "fields", "edges").map((e) => String(at(e, "cursor"))),
    String(at(data, "fields", "page_info", "end_cursor")),
  ];
}

const base64url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

test("ids and cursors served by /graphql carry no row number in any readable encoding", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await gql(t, acmeToken, EVERY_ID);
  assert.equal(res.body.errors, undefined);
  const ids = idsIn(res.body);
  assert.equal(ids.length, 1 + 1 + 7 + 7 + 1);
  for (const id of ids) {
    assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    const text = atob(id.replace(/-/g, "+").replace(/_/g, "/"));
    assert.doesNotMatch(text, /(Field|User|Organization|cursor):/, `${id} decodes to ${JSON.stringify(text)}`);
  }
  // The row numbers an old client could read: none of them is spelled in base64url either.
  for (let row = 1; row <= 20; row++) {
    for (const old of [`Field:${row}`, `User:${row}`, `Organization:${row}`, `cursor:v1:${row}`]) {
      assert.ok(!ids.includes(base64url(old)), old);
    }
  }
});

test("ids and cursors are the same after a restart: a second app instance on the same database", async () => {
  const db = tempDb("fieldgate-ids-");
  try {
    const { t, acmeToken } = await buildWorld({ FIELDGATE_DB: db.path });
    const before = idsIn((await gql(t, acmeToken, EVERY_ID)).body);
    assert.deepEqual(idsIn((await gql(t, acmeToken, EVERY_ID)).body), before, "the same request twice");
    await t.app.close();
    const restarted = await openTestApp({ FIELDGATE_DB: db.path });
    try {
      const after = await gql(restarted, acmeToken, EVERY_ID);
      assert.equal(after.body.errors, undefined);
      assert.deepEqual(idsIn(after.body), before);
      // What the first instance handed out still works on the second: a field by id, and a page after a cursor.
      const field = await gql(restarted, acmeToken, "query($id: ID!) { field(id: $id) { name } }", { id: before[2] });
      assert.equal(at(field.body.data, "field", "name"), "Field 1");
      const next = await gql(restarted, acmeToken, "query($after: String) { fields(after: $after) { nodes { id } } }", { after: before[9] });
      assert.deepEqual(listAt(next.body.data, "fields", "nodes").map((n) => at(n, "id")), before.slice(3, 9));
    } finally {
      await restarted.app.close();
    }
  } finally {
    db.cleanup();
  }
});

/** `id` with the character at `index` replaced by another base64url character. */
function altered(id: string, index: number): string {
  const replacement = id[index] === "A" ? "B" : "A";
  return id.slice(0, index) + replacement + id.slice(index + 1);
}

const ARGUMENTS = [
  { name: "field(id:)", query: "query($v: ID!) { field(id: $v) { name } }", message: /Field id/ },
  { name: "fields(after:)", query: "query($v: String) { fields(after: $v) { total_count } }", message: /cursor/ },
  { name: "fields(organization_id:)", query: "query($v: ID) { fields(organization_id: $v) { total_count } }", message: /Organization id/ },
];

for (const { name, query, message } of ARGUMENTS) {
  test(`${name} refuses forged, altered and old-style values with BAD_USER_INPUT`, async () => {
    const { t, acmeToken } = await buildWorld();
    const served = idsIn((await gql(t, acmeToken, EVERY_ID)).body);
    const genuine = name === "fields(organization_id:)" ? served[1]! : served[2]!;
    const forged = [
      "6",
      base64url("Field:6"),
      base64url("Organization:1"),
      base64url("cursor:v1:6"),
      "AAAAAAAAAAAAAAAAAAAAAA",
      altered(genuine, 0),
      altered(genuine, 11),
      altered(genuine, 20),
      genuine + "A",
    ];
    for (const value of forged) {
      const res = await gql(t, acmeToken, query, { v: value });
      assert.equal(res.status, 200, value);
      assert.equal(res.body.errors?.[0]?.extensions?.code, "BAD_USER_INPUT", value);
      assert.match(res.body.errors![0]!.message, message);
    }
    const ok = await gql(t, acmeToken, query, { v: genuine });
    assert.equal(ok.body.errors, undefined, "the genuine value still works");
  });
}

test("another organization's genuine field id is not found, exactly like a missing one", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  const globexIds = idsIn((await gql(t, globexToken, EVERY_ID)).body);
  const globexField = globexIds[2]!;
  const globexOrganization = globexIds[1]!;
  const res = await gql(t, acmeToken, `{ field(id: "${globexField}") { name } fields(organization_id: "${globexOrganization}") { total_count } }`);
  assert.deepEqual(res.body, { data: { field: null, fields: { total_count: 0 } } });
  // Its cursor only positions the caller's own page: acme's fields all come before globex's, so none follow it.
  const after = await gql(t, acmeToken, `{ fields(after: "${globexField}") { total_count nodes { id } } }`);
  assert.deepEqual(after.body, { data: { fields: { total_count: 7, nodes: [] } } });
});
