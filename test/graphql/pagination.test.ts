import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { at, buildWorld, globalIdOf, gql, listAt } from "../helpers/graphql.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { mintAccessToken } from "../helpers/tokens.ts";

const PAGE = `query($after: String) { fields(first: 3, after: $after) {
  total_count nodes { id } edges { cursor node { id } } page_info { has_next_page end_cursor } } }`;

test("walking fields page by page visits every field once with a stable total", async () => {
  const { t, acmeToken } = await buildWorld();
  const seen: unknown[] = [];
  let after: unknown = null;
  let pages = 0;
  for (;;) {
    const res = await gql(t, acmeToken, PAGE, { after });
    const conn = at(res.body.data, "fields");
    assert.equal(at(conn, "total_count"), 7);
    assert.deepEqual(listAt(conn, "edges").map((e) => at(e, "node", "id")), listAt(conn, "nodes").map((n) => at(n, "id")));
    seen.push(...listAt(conn, "nodes").map((n) => at(n, "id")));
    pages++;
    if (!at(conn, "page_info", "has_next_page")) break;
    assert.equal(at(conn, "page_info", "end_cursor"), at(listAt(conn, "edges"), -1, "cursor"));
    after = at(conn, "page_info", "end_cursor");
  }
  assert.equal(pages, 3);
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);
});

test("cursors are stable: the same page twice gives the same cursors", async () => {
  const { t, acmeToken } = await buildWorld();
  const a = await gql(t, acmeToken, PAGE, { after: null });
  const b = await gql(t, acmeToken, PAGE, { after: null });
  assert.deepEqual(a.body.data, b.body.data);
});

test("first defaults to 50 and is capped at the maximum page size", async () => {
  const t = await openTestApp();
  await t.seed.fields(120);
  const { client } = await t.seed.client({ grant: "client_credentials" });
  const token = await mintAccessToken(t, { client });
  const byDefault = await gql(t, token, "{ fields { total_count nodes { id } page_info { has_next_page } } }");
  assert.equal(listAt(byDefault.body.data, "fields", "nodes").length, 50);
  assert.equal(at(byDefault.body.data, "fields", "total_count"), 120);
  const capped = await gql(t, token, "{ fields(first: 1000) { nodes { id } page_info { has_next_page } } }");
  assert.equal(listAt(capped.body.data, "fields", "nodes").length, t.config.graphql.maxPageSize);
  assert.equal(at(capped.body.data, "fields", "page_info", "has_next_page"), true);
});

test("first: 0 returns no nodes but still says whether fields follow", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await gql(t, acmeToken, "{ fields(first: 0) { total_count nodes { id } page_info { has_next_page end_cursor } } }");
  assert.deepEqual(at(res.body.data, "fields"), { total_count: 7, nodes: [], page_info: { has_next_page: true, end_cursor: null } });
});

/** A real cursor with its last character's unused low bits set: the same bytes, spelled non-canonically. */
function nonCanonical(cursor: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return cursor.slice(0, -1) + alphabet[alphabet.indexOf(cursor.at(-1)!) + 1];
}

const badArgs: { name: string; args: (t: TestApp) => Promise<string> | string }[] = [
  { name: "a negative first", args: () => "first: -1" },
  { name: "a cursor that is not base64url", args: () => 'after: "%%%"' },
  { name: "a cursor in the readable format of earlier versions", args: () => 'after: "Y3Vyc29yOnYxOjE"' },
  { name: "a cursor of another kind (an organization id)", args: async (t) => `after: "${await globalIdOf(t, "Organization", 1)}"` },
  { name: "a non-canonical cursor", args: async (t) => `after: "${nonCanonical(await globalIdOf(t, "Field", 1))}"` },
  { name: "a cursor another deployment issued", args: async () => `after: "${await globalIdOf(await openTestApp(), "Field", 1)}"` },
];

for (const row of badArgs) {
  test(`fields refuses ${row.name} with BAD_USER_INPUT`, async () => {
    const { t, acmeToken } = await buildWorld();
    const res = await gql(t, acmeToken, `{ fields(${await row.args(t)}) { total_count } }`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data, null);
    assert.equal(res.body.errors![0]!.extensions!.code, "BAD_USER_INPUT");
  });
}

test("a connection reads only what is selected, and the count with the page in one store call", async () => {
  const { t, acmeToken } = await buildWorld();
  const calls: string[] = [];
  const fields = t.store.fields;
  const count = fields.count.bind(fields);
  const page = fields.page.bind(fields);
  const countAndPage = fields.countAndPage.bind(fields);
  fields.count = (filter) => (calls.push("count"), count(filter));
  fields.page = (filter, options) => (calls.push("page"), page(filter, options));
  fields.countAndPage = (filter, options) => (calls.push("countAndPage"), countAndPage(filter, options));
  const run = async (query: string) => {
    calls.length = 0;
    const res = await gql(t, acmeToken, query);
    assert.equal(res.body.errors, undefined);
    return { calls: [...calls], data: res.body.data };
  };
  assert.deepEqual((await run("{ fields { total_count } }")).calls, ["count"]);
  assert.deepEqual((await run("{ fields { nodes { id } edges { cursor } page_info { has_next_page } } }")).calls, ["page"]);
  const both = await run("{ fields(first: 2) { page_info { has_next_page } total_count nodes { id } edges { cursor } } }");
  assert.deepEqual(both.calls, ["countAndPage"], "one snapshot for the total and the page");
  const connection = (both.data as { fields: { total_count: number; nodes: unknown[]; page_info: { has_next_page: boolean } } }).fields;
  assert.equal(connection.nodes.length, 2);
  assert.equal(connection.page_info.has_next_page, connection.total_count > 2);
  // Two connections in one query are two reads, each with its own parts.
  assert.deepEqual((await run("{ a: fields { total_count } b: fields { total_count nodes { id } } }")).calls, ["count", "countAndPage"]);
});

test("a last page exactly `first` long says no page follows", async () => {
  const { t, acmeToken, acmeFieldCount } = await buildWorld();
  const res = await gql(t, acmeToken, `{ fields(first: ${acmeFieldCount}) { total_count page_info { has_next_page } } }`);
  assert.equal(at(res.body.data, "fields", "total_count"), acmeFieldCount);
  assert.equal(at(res.body.data, "fields", "page_info", "has_next_page"), false);
});
