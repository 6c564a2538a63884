import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { GraphQLError } from "graphql";
import { createContext } from "../../src/graphql/context.ts";
import { createIdCodec } from "../../src/graphql/cursor.ts";
import { fieldConnection } from "../../src/graphql/resolvers.ts";
import { authenticateBearer } from "../../src/oauth/bearer_auth.ts";
import { at, buildWorld, gql, listAt } from "../helpers/graphql.ts";
import { BASE } from "../helpers/requests.ts";
import type { TestApp } from "../helpers/test_app.ts";
import type { Field } from "../../src/store/contract.ts";

/** The context the endpoint would build for a request with `token`. */
async function contextFor(t: TestApp, token: string) {
  const url = `${BASE}/graphql`;
  const access = await authenticateBearer(t.app.deps, new Request(url, { headers: { authorization: `Bearer ${token}` } }), new URL(url));
  return createContext(t.app.deps, access, createIdCodec(t.app.deps));
}

function boundaryLimitError(error: unknown): boolean {
  return error instanceof GraphQLError && error.extensions.code === "BOUNDARY_LIMIT_EXCEEDED";
}

test("the boundary budget takes sizes up to the cap exactly and refuses every later one; each request has its own", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1024" });
  const ctx = await contextFor(t, acmeToken);
  assert.equal(ctx.boundaryBudget.take(1_000), true);
  assert.equal(ctx.boundaryBudget.take(24), true);
  assert.equal(ctx.boundaryBudget.take(1), false);
  assert.equal(ctx.boundaryBudget.take(0), false, "once refused, even an empty boundary is");
  assert.throws(() => ctx.boundaryOf({ id: 1 } as Field), boundaryLimitError, "a row the budget refused has no boundary to serve");
  const next = await contextFor(t, acmeToken);
  assert.equal(next.boundaryBudget.take(1_024), true, "each request has its own budget");
});

test("a page charges the boundaries it serves, not the one row read only to tell whether a next page exists", async () => {
  const { t, acmeToken } = await buildWorld();
  await t.seed.fields(20, { org: "acme" });
  const ctx = await contextFor(t, acmeToken);
  const charged: number[] = [];
  ctx.boundaryBudget = { take: (bytes) => (charged.push(bytes), true) };
  const acme = (await t.store.organizations.findBySlug("acme"))!.id;
  const page = await (await fieldConnection(ctx, [acme], { first: 3 }, true)).page();
  assert.equal(page.hasNextPage, true);
  assert.deepEqual(page.nodes.map((f) => f.boundary!.length), charged);
});

test("the same boundary served twice in a response is charged twice: aliases, nodes and edges together", async () => {
  const { t, acmeToken } = await boundaryWorld();
  const [row] = listAt((await gql(t, acmeToken, "{ fields(first: 1) { nodes { id boundary } } }")).body.data, "fields", "nodes");
  const bytes = JSON.stringify(at(row, "boundary")).length;
  const copies = Math.floor(1_024 / bytes) + 1;
  const aliased = (n: number) => `{ field(id: "${at(row, "id")}") { ${Array.from({ length: n }, (_, i) => `b${i}: boundary`).join(" ")} } }`;
  const many = await gql(t, acmeToken, aliased(copies));
  assert.equal(many.body.errors?.[0]?.extensions?.code, "BOUNDARY_LIMIT_EXCEEDED", `${copies} copies of ${bytes} bytes`);
  const fits = await gql(t, acmeToken, aliased(copies - 1));
  assert.equal(fits.body.errors, undefined, "one copy fewer fits the cap");
  // As many rows as fit once; each once through nodes and once through edges is twice that (over 1 024).
  const acme = (await t.store.organizations.findBySlug("acme"))!.id;
  const sizes = (await t.store.fields.page({ organizationIds: [acme] }, { afterId: 0, limit: 30 }, { take: () => true }))
    .map((f) => f.boundary!.length);
  let fitting = 0;
  for (let total = sizes[0]!; total <= 1_024; total += sizes[fitting]!) fitting++;
  const once = await gql(t, acmeToken, `{ fields(first: ${fitting}) { nodes { boundary } } }`);
  assert.equal(once.body.errors, undefined);
  const both = await gql(t, acmeToken, `{ fields(first: ${fitting}) { nodes { boundary } edges { node { boundary } } } }`);
  assert.equal(both.body.errors?.[0]?.extensions?.code, "BOUNDARY_LIMIT_EXCEEDED");
});

test("boundaries under @skip or a false @include are not read, so they spend none of the budget", async () => {
  const { t, acmeToken } = await boundaryWorld();
  const calls = spyBudgets(t);
  // The cap (1 024 bytes) holds about ten boundaries: the skipped page would spend it all if it were read.
  const query = `query ($with: Boolean!) {
    a: fields(first: 20) { nodes { id boundary @include(if: $with) } }
    b: fields(first: 20) { nodes { ... on Field @skip(if: true) { boundary } } }
    c: fields(first: 2) { nodes { boundary } } }`;
  const res = await gql(t, acmeToken, query, { with: false });
  assert.equal(res.body.errors, undefined);
  assert.equal(listAt(res.body.data, "c", "nodes").length, 2);
  assert.deepEqual(calls.map(([, budgeted]) => budgeted), [false, false, true]);
  // The same text with the variable the other way reads them: an answer a variable decided is not kept.
  calls.length = 0;
  const withBoundaries = await gql(t, acmeToken, query, { with: true });
  assert.equal(withBoundaries.body.errors?.[0]?.extensions?.code, "BOUNDARY_LIMIT_EXCEEDED");
  assert.deepEqual(calls.map(([, budgeted]) => budgeted), [true, false, true]);
});

/** Which field reads of the app's store were handed a boundary budget, by method. */
function spyBudgets(t: TestApp) {
  const store = t.app.deps.store.fields;
  const calls: [string, boolean][] = [];
  const { page, countAndPage, findById } = store;
  store.page = (filter, options, boundaries) => (calls.push(["page", boundaries !== undefined]), page.call(store, filter, options, boundaries));
  store.countAndPage = (filter, options, boundaries) =>
    (calls.push(["countAndPage", boundaries !== undefined]), countAndPage.call(store, filter, options, boundaries));
  store.findById = (id, organizationIds, boundaries) =>
    (calls.push(["findById", boundaries !== undefined]), findById.call(store, id, organizationIds, boundaries));
  return calls;
}

test("a query reads boundaries only where it selects them: nodes, edges, fragments, field(id:)", async () => {
  const { t, acmeToken } = await buildWorld();
  await t.seed.fields(20, { org: "acme" });
  const calls = spyBudgets(t);
  // Up to 4 600 rows within the cost limit, none with its boundary (about 175 MB with 1 000-vertex fields before).
  const nested = await gql(t, acmeToken, "{ fields(first: 100) { nodes { organization { fields(first: 46) { nodes { id } } } } } }");
  assert.equal(nested.body.errors, undefined);
  assert.ok(calls.length > 20);
  assert.deepEqual(calls.filter(([, budgeted]) => budgeted), []);
  const rows: [string, [string, boolean][]][] = [
    ["{ fields(first: 3) { nodes { boundary } } }", [["page", true]]],
    ["{ fields(first: 3) { total_count edges { node { b: boundary } } } }", [["countAndPage", true]]],
    ["{ fields(first: 3) { nodes { ...F } } } fragment F on Field { ... on Field { boundary } }", [["page", true]]],
    ["{ fields(first: 3) { nodes { id } } x: fields(first: 2) { nodes { boundary } } }", [["page", false], ["page", true]]],
  ];
  // Twice each: the second run of a query text finds the lookahead's answer kept for its (cached) syntax nodes.
  for (const [query, expected] of [...rows, ...rows]) {
    calls.length = 0;
    const res = await gql(t, acmeToken, query);
    assert.equal(res.body.errors, undefined, query);
    assert.deepEqual(calls, expected, query);
  }
  const id = at(listAt((await gql(t, acmeToken, "{ fields(first: 1) { nodes { id } } }")).body.data, "fields", "nodes")[0], "id");
  for (const [selection, budgeted] of [["name", false], ["boundary", true]] as const) {
    calls.length = 0;
    const res = await gql(t, acmeToken, `{ field(id: "${id}") { ${selection} } }`);
    assert.equal(res.body.errors, undefined);
    assert.deepEqual(calls, [["findById", budgeted]]);
  }
});

// acme gets 27 fields with boundaries of 87 to 122 bytes: 5 fit in 1 024 bytes, 27 do not.
async function boundaryWorld() {
  const world = await buildWorld({ FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1024" });
  await world.t.seed.fields(20, { org: "acme" });
  return world;
}

test("boundaries past the response cap are a BOUNDARY_LIMIT_EXCEEDED error instead of the data", async () => {
  const { t, acmeToken } = await boundaryWorld();
  const res = await gql(t, acmeToken, "{ fields(first: 100) { nodes { id boundary } } }");
  assert.equal(res.status, 200);
  // boundary is non-null, so the error nulls its parents up to data: no boundary text reaches the response.
  assert.equal(res.body.data, null);
  assert.ok(res.body.errors!.length > 0);
  for (const error of res.body.errors!) {
    assert.equal(error.extensions?.code, "BOUNDARY_LIMIT_EXCEEDED");
    assert.match(error.message, /boundaries in this response would exceed 1024 bytes/);
    assert.equal(at(error.path, -1), "boundary");
  }
  assert.equal(t.log.filter((line) => line.event === "graphql_error").length, 0, "a deliberate error, not a masked failure");
});

test("boundaries within the response cap are served, on every request", async () => {
  const { t, acmeToken } = await boundaryWorld();
  for (let i = 0; i < 3; i++) {
    const res = await gql(t, acmeToken, "{ fields(first: 5) { nodes { boundary } } }");
    assert.equal(res.body.errors, undefined);
    const nodes = listAt(res.body.data, "fields", "nodes");
    assert.equal(nodes.length, 5);
    assert.equal(at(nodes[0], "boundary", "type"), "Polygon");
  }
});

/**
 * A POST /graphql whose body is produced only when the endpoint reads it, after the bearer check: `beforeBody` runs
 * between the check (which snapshots the memberships) and the resolvers.
 */
function requestWithBodyAfterBearerCheck(token: string, query: string, beforeBody: () => Promise<void>): Request {
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await beforeBody();
      controller.enqueue(new TextEncoder().encode(JSON.stringify({ query })));
      controller.close();
    },
  }, { highWaterMark: 0 });
  return new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);
}

test("every resolver of a request sees the organizations of its bearer check, even when a membership ends meanwhile", async () => {
  const { t, globexToken, globexFieldCount } = await buildWorld();
  const person = (await t.store.users.list()).find((user) => user.kind === "person")!;
  const globex = (await t.store.organizations.findBySlug("globex"))!;
  const query = "{ fields { total_count nodes { organization { slug } } } organizations { slug } viewer { organizations { slug } } }";
  let removed = false;
  const res = await t.app.fetch(requestWithBodyAfterBearerCheck(globexToken, query, async () => {
    removed = await t.store.organizations.removeMember(globex.id, person.id);
  }));
  assert.ok(removed, "the membership ended after the bearer check");
  const body = await res.json();
  assert.equal(body.errors, undefined);
  assert.deepEqual(body.data, {
    fields: { total_count: globexFieldCount, nodes: Array.from({ length: globexFieldCount }, () => ({ organization: { slug: "globex" } })) },
    organizations: [{ slug: "globex" }],
    viewer: { organizations: [{ slug: "globex" }] },
  });
  const next = await gql(t, globexToken, query);
  assert.deepEqual(next.body.data, { fields: { total_count: 0, nodes: [] }, organizations: [], viewer: { organizations: [] } }, "the next request sees the change");
});
