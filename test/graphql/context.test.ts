import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { GraphQLError } from "graphql";
import { createContext } from "../../src/graphql/context.ts";
import { authenticateBearer } from "../../src/oauth/bearer_auth.ts";
import { at, buildWorld, gql, listAt } from "../helpers/graphql.ts";
import { BASE } from "../helpers/requests.ts";
import type { TestApp } from "../helpers/test_app.ts";

/** The context the endpoint would build for a request with `token`. */
async function contextFor(t: TestApp, token: string) {
  const url = `${BASE}/graphql`;
  const access = await authenticateBearer(t.app.deps, new Request(url, { headers: { authorization: `Bearer ${token}` } }), new URL(url));
  return createContext(t.app.deps, access);
}

function boundaryLimitError(error: unknown): boolean {
  return error instanceof GraphQLError && error.extensions.code === "BOUNDARY_LIMIT_EXCEEDED";
}

/** The ids and boundary sizes of acme's fields, in id order. */
async function acmeBoundaries(t: TestApp) {
  const acme = (await t.store.organizations.findBySlug("acme"))!.id;
  const rows = await t.store.fields.page({ organizationIds: [acme] }, { afterId: 0, limit: 100 });
  const { texts } = await t.store.fields.boundaries(rows.map((f) => f.id), [acme], 1 << 30);
  return rows.map((f) => ({ id: f.id, bytes: texts.get(f.id)!.length }));
}

test("boundary serves texts up to the cap exactly and refuses every one after it, each request with its own budget", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1024" });
  await t.seed.fields(20, { org: "acme" });
  const fields = await acmeBoundaries(t);
  let fitting = 0;
  for (let total = 0; total + fields[fitting]!.bytes <= 1_024; fitting++) total += fields[fitting]!.bytes;
  const ctx = await contextFor(t, acmeToken);
  // One pass, as graphql-js asks for a page's boundaries.
  const served = await Promise.allSettled(fields.map((f) => ctx.boundary(f.id)));
  assert.deepEqual(served.map((r) => r.status), fields.map((_, i) => (i < fitting ? "fulfilled" : "rejected")));
  for (const result of served) if (result.status === "rejected") assert.ok(boundaryLimitError(result.reason));
  await assert.rejects(ctx.boundary(fields[0]!.id), boundaryLimitError, "past the cap, every later boundary is refused");
  const next = await contextFor(t, acmeToken);
  assert.equal((await next.boundary(fields[0]!.id)).length, fields[0]!.bytes, "each request has its own budget");
});

test("boundary reads one pass's boundaries in one store call, never more text than the budget left", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1024" });
  await t.seed.fields(20, { org: "acme" });
  const fields = await acmeBoundaries(t);
  const store = t.app.deps.store.fields;
  const read = store.boundaries.bind(store);
  const calls: { ids: number; maxBytes: number; bytes: number }[] = [];
  store.boundaries = async (ids, organizationIds, maxBytes) => {
    const result = await read(ids, organizationIds, maxBytes);
    calls.push({ ids: ids.length, maxBytes, bytes: [...result.texts.values()].reduce((n, text) => n + text.length, 0) });
    return result;
  };
  const ctx = await contextFor(t, acmeToken);
  await Promise.allSettled(fields.slice(0, 3).map((f) => ctx.boundary(f.id)));
  await Promise.allSettled(fields.map((f) => ctx.boundary(f.id)));
  assert.equal(calls.length, 2);
  assert.deepEqual(calls.map((c) => c.ids), [3, fields.length]);
  const first = fields.slice(0, 3).reduce((n, f) => n + f.bytes, 0);
  assert.deepEqual(calls.map((c) => c.maxBytes), [1_024, 1_024 - first]);
  for (const call of calls) assert.ok(call.bytes <= call.maxBytes, JSON.stringify(call));
});

test("a field deleted between its page and its boundary is a FIELD_DELETED error, not an internal one", async () => {
  const { t, acmeToken } = await buildWorld();
  const [field] = await acmeBoundaries(t);
  const ctx = await contextFor(t, acmeToken);
  const acme = (await t.store.organizations.findBySlug("acme"))!.id;
  await t.store.fields.insertMany(acme, [], { now: t.clock.nowSeconds(), replace: true });
  await assert.rejects(ctx.boundary(field!.id), (error) => error instanceof GraphQLError && error.extensions.code === "FIELD_DELETED");
});

test("a query that selects no boundary reads none, however many nested fields it lists", async () => {
  const { t, acmeToken } = await buildWorld();
  await t.seed.fields(20, { org: "acme" });
  const store = t.app.deps.store.fields;
  let reads = 0;
  const read = store.boundaries.bind(store);
  store.boundaries = (...args) => (reads++, read(...args));
  const res = await gql(t, acmeToken, "{ fields(first: 100) { nodes { organization { fields(first: 46) { nodes { id } } } } } }");
  assert.equal(res.body.errors, undefined);
  assert.ok(listAt(res.body.data, "fields", "nodes").length > 20);
  assert.equal(reads, 0);
  const withBoundary = await gql(t, acmeToken, "{ fields(first: 3) { nodes { boundary } } }");
  assert.equal(withBoundary.body.errors, undefined);
  assert.equal(reads, 1, "a page's boundaries in one read");
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
