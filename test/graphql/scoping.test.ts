import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { at, buildWorld, globalIdOf, gql, listAt } from "../helpers/graphql.ts";
import { tokenKey } from "../../src/oauth/token_keys.ts";

// acme (org 1) has fields 1..7, globex (org 2) fields 8..11; the acme token must never see globex data.

test("fields: total_count and nodes only cover the caller's organizations", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  const acme = await gql(t, acmeToken, "{ fields(first: 100) { total_count nodes { crop organization { slug } } } }");
  assert.equal(at(acme.body.data, "fields", "total_count"), 7);
  assert.equal(listAt(acme.body.data, "fields", "nodes").length, 7);
  assert.ok(listAt(acme.body.data, "fields", "nodes").every((n) => at(n, "organization", "slug") === "acme"));
  const globex = await gql(t, globexToken, "{ fields(first: 100) { total_count nodes { crop organization { slug } } } }");
  assert.equal(at(globex.body.data, "fields", "total_count"), 4);
  assert.equal(listAt(globex.body.data, "fields", "nodes").length, 4);
  assert.ok(listAt(globex.body.data, "fields", "nodes").every((n) => at(n, "organization", "slug") === "globex"));
});

test("field(id): another organization's field is null, exactly like a missing one", async () => {
  const { t, acmeToken } = await buildWorld();
  const globexField = await globalIdOf(t, "Field", 8);
  const missing = await globalIdOf(t, "Field", 999);
  const own = await globalIdOf(t, "Field", 1);
  const res = await gql(t, acmeToken, `{ a: field(id: "${globexField}") { name } b: field(id: "${missing}") { name } c: field(id: "${own}") { name } }`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, { a: null, b: null, c: { name: "Field 1" } });
  assert.equal(res.body.errors, undefined);
});

test("field(id): a guessed raw row id or an id of another type is a BAD_USER_INPUT error", async () => {
  const { t, acmeToken } = await buildWorld();
  for (const id of ["8", await globalIdOf(t, "Organization", 2), "RmllbGQ6OA==", "RmllbGQ6OA", "not base64!"]) {
    const res = await gql(t, acmeToken, "query($id: ID!) { field(id: $id) { name } }", { id });
    assert.equal(at(res.body.data, "field"), null, id);
    assert.equal(res.body.errors![0]!.extensions!.code, "BAD_USER_INPUT", id);
  }
});

test("organizations and viewer.organizations list only memberships", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  const query = "{ organizations { slug fields { total_count } } viewer { organizations { slug } } }";
  const acme = await gql(t, acmeToken, query);
  assert.deepEqual(acme.body.data, {
    organizations: [{ slug: "acme", fields: { total_count: 7 } }],
    viewer: { organizations: [{ slug: "acme" }] },
  });
  const globex = await gql(t, globexToken, query);
  assert.deepEqual(globex.body.data, {
    organizations: [{ slug: "globex", fields: { total_count: 4 } }],
    viewer: { organizations: [{ slug: "globex" }] },
  });
});

test("organization_id of an organization the caller is not in yields an empty connection", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = "query($org: ID) { fields(organization_id: $org) { total_count nodes { id } page_info { has_next_page end_cursor } } }";
  for (const org of [await globalIdOf(t, "Organization", 2), await globalIdOf(t, "Organization", 999)]) {
    const res = await gql(t, acmeToken, query, { org });
    assert.deepEqual(at(res.body.data, "fields"), { total_count: 0, nodes: [], page_info: { has_next_page: false, end_cursor: null } });
  }
  const own = await gql(t, acmeToken, query, { org: await globalIdOf(t, "Organization", 1) });
  assert.equal(at(own.body.data, "fields", "total_count"), 7);
  const bad = await gql(t, acmeToken, query, { org: "2" });
  assert.equal(bad.body.errors![0]!.extensions!.code, "BAD_USER_INPUT");
});

test("a cursor pointing into another organization's ids still returns only the caller's fields", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  // Field 7 is acme's last; after it come only globex ids, which the acme caller must not reach.
  const acme = await gql(t, acmeToken, `{ fields(after: "${await globalIdOf(t, "Field", 7)}") { total_count nodes { id } } }`);
  assert.deepEqual(at(acme.body.data, "fields"), { total_count: 7, nodes: [] });
  const globex = await gql(t, globexToken, `{ fields(after: "${await globalIdOf(t, "Field", 1)}") { nodes { organization { slug } } } }`);
  assert.equal(listAt(globex.body.data, "fields", "nodes").length, 4);
  assert.ok(listAt(globex.body.data, "fields", "nodes").every((n) => at(n, "organization", "slug") === "globex"));
});

test("crop and season filters stay inside the caller's organizations", async () => {
  const { t, acmeToken } = await buildWorld();
  const barley = await gql(t, acmeToken, '{ fields(crop: "barley") { total_count } }');
  assert.equal(at(barley.body.data, "fields", "total_count"), 0);
  const season = await gql(t, acmeToken, '{ fields(season: "2025") { total_count } }');
  assert.equal(at(season.body.data, "fields", "total_count"), 0);
  const wheat = await gql(t, acmeToken, '{ fields(crop: "wheat", season: "2026") { total_count } }');
  assert.equal(at(wheat.body.data, "fields", "total_count"), 7);
});

test("viewer shows the acting user and application, never another user's", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  const query = "{ viewer { id username is_integration application { client_id name } } }";
  const a = await gql(t, acmeToken, query);
  const b = await gql(t, globexToken, query);
  assert.notEqual(at(a.body.data, "viewer", "id"), at(b.body.data, "viewer", "id"));
  assert.notEqual(at(a.body.data, "viewer", "application", "client_id"), at(b.body.data, "viewer", "application", "client_id"));
  const tokenA = await t.store.tokens.findByHash(await tokenKey(t.app.deps, acmeToken));
  assert.equal(at(a.body.data, "viewer", "id"), await globalIdOf(t, "User", tokenA!.userId));
  assert.equal(at(a.body.data, "viewer", "application", "client_id"), tokenA!.clientPublicId);
});

test("a user in both organizations sees both", async () => {
  const { t } = await buildWorld();
  const user = await t.seed.user({ org: "acme" });
  const globex = await t.store.organizations.findBySlug("globex");
  await t.store.organizations.addMember(globex!.id, user.id, { now: t.clock.nowSeconds() });
  const { client } = await t.seed.client();
  const { mintAccessToken } = await import("../helpers/tokens.ts");
  const token = await mintAccessToken(t, { client, userId: user.id, grantType: "authorization_code" });
  const res = await gql(t, token, "{ fields { total_count } organizations { slug } }");
  assert.deepEqual(res.body.data, { fields: { total_count: 11 }, organizations: [{ slug: "acme" }, { slug: "globex" }] });
});

test("a membership joined or ended is what the same token reads on its next request", async () => {
  const { t, globexToken, acmeFieldCount, globexFieldCount } = await buildWorld();
  const count = async () => at((await gql(t, globexToken, "{ fields { total_count } }")).body, "data", "fields", "total_count");
  assert.equal(await count(), globexFieldCount);
  const viewer = (await t.store.users.list()).find((u) => u.kind === "person")!;
  const joined = await t.store.organizations.join(viewer.id, "acme", t.clock.nowSeconds());
  assert.deepEqual([joined.joined, joined.created], [true, false]);
  assert.equal(await count(), globexFieldCount + acmeFieldCount);
  const globex = (await t.store.organizations.findBySlug("globex"))!;
  assert.equal(await t.store.organizations.removeMember(globex.id, viewer.id), true);
  assert.equal(await count(), acmeFieldCount);
  assert.equal(await t.store.organizations.removeMember(globex.id, viewer.id), false, "nothing left to end");
  assert.equal((await t.store.organizations.join(viewer.id, "acme", t.clock.nowSeconds())).joined, false);
});

test("total_counts kept between requests stay apart per token and per filter", async () => {
  const { t, acmeToken, globexToken } = await buildWorld();
  await t.seed.fields(2, { org: "acme", crop: "wheat", season: "2025" });
  const query = `{ all: fields { total_count } s2025: fields(season: "2025") { total_count }
    wheat: fields(crop: "wheat") { total_count } wheat2026: fields(crop: "wheat", season: "2026") { total_count } }`;
  const counts = async (token: string) => {
    const { body } = await gql(t, token, query);
    return ["all", "s2025", "wheat", "wheat2026"].map((name) => at(body.data, name, "total_count"));
  };
  // Twice each, interleaved: the second answers come from what the first ones kept, and must not cross over.
  for (let round = 0; round < 2; round++) {
    assert.deepEqual(await counts(acmeToken), [9, 2, 9, 7]);
    assert.deepEqual(await counts(globexToken), [4, 4, 0, 0]);
  }
});
