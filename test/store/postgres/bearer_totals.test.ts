// The field total read with the bearer check on PostgreSQL: a bearer total_count request costs one round trip, and
// every count stays that of its own request, filtered or not, whatever committed in between.
import assert from "node:assert/strict";
import { test } from "../../helpers/bounded.ts";
import { openPostgresStore } from "../../../src/store/postgres/store.ts";
import { idsWithTotal, totalCarried } from "../../../src/store/postgres/bearer_totals.ts";
import type { FieldFilter, NewField, Store } from "../../../src/store/contract.ts";
import { tokenKey } from "../../../src/oauth/token_keys.ts";
import { at, gql } from "../../helpers/graphql.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { openTestAppOn, type TestApp } from "../../helpers/test_app.ts";
import { mintAccessToken } from "../../helpers/tokens.ts";

interface World {
  t: TestApp;
  /** Another instance's store on the same database: the imports and membership changes other servers commit. */
  other: Store;
  acme: number;
  globex: number;
  /** A token acting as acme's integration user (acme only). */
  acmeToken: string;
  /** A token acting as a person in acme and globex, and that person's user id. */
  bothToken: string;
  personId: number;
}

/** acme has 7 wheat fields of 2026, globex 4 barley fields of 2025. */
async function withWorld(url: string, fn: (w: World) => Promise<void>): Promise<void> {
  const t = await openTestAppOn(url);
  const other = await openPostgresStore(url);
  try {
    await t.seed.fields(7, { org: "acme", crop: "wheat", season: "2026" });
    await t.seed.fields(4, { org: "globex", crop: "barley", season: "2025" });
    const acme = (await t.seed.organization("acme")).id;
    const globex = (await t.seed.organization("globex")).id;
    const { client: integration } = await t.seed.client({ grant: "client_credentials", org: "acme" });
    const { client: app } = await t.seed.client({ grant: "authorization_code" });
    const person = await t.seed.user({ org: "acme" });
    await t.store.organizations.addMember(globex, person.id, { now: t.clock.nowSeconds() });
    const acmeToken = await mintAccessToken(t, { client: integration });
    const bothToken = await mintAccessToken(t, { client: app, userId: person.id, grantType: "authorization_code" });
    await fn({ t, other, acme, globex, acmeToken, bothToken, personId: person.id });
  } finally {
    await other.close();
    await t.store.close();
  }
}

/** The round trips `run` costs the app's pool. */
async function tripsOf<T>(t: TestApp, run: () => Promise<T>): Promise<{ value: T; trips: number }> {
  const before = t.store.stats!().roundTrips;
  const value = await run();
  return { value, trips: t.store.stats!().roundTrips - before };
}

/** One POST /graphql through the app: the total at `path` and the round trips the request cost. */
async function totalOf(t: TestApp, token: string, query: string, ...path: (string | number)[]) {
  const { value, trips } = await tripsOf(t, () => gql(t, token, query));
  assert.equal(value.status, 200);
  assert.equal(value.body.errors, undefined, JSON.stringify(value.body.errors));
  return { total: at(value.body.data, ...path), trips };
}

const COUNT = "{ fields { total_count } }";
const count = (t: TestApp, token: string) => totalOf(t, token, COUNT, "fields", "total_count");

const newFields = (n: number, crop = "wheat"): NewField[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `New ${i}`,
    areaHa: 1,
    crop,
    season: "2026",
    boundary: JSON.stringify({ type: "Polygon", coordinates: [] }),
    centroid: { lon: 5, lat: 52 },
  }));

postgresTest("a bearer total_count request costs one round trip and counts the caller's organizations", async (db) => {
  await withWorld(db.url, async ({ t, acmeToken, bothToken }) => {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await count(t, acmeToken), { total: 7, trips: 1 });
      assert.deepEqual(await count(t, bothToken), { total: 11, trips: 1 });
    }
  });
});

postgresTest("an import, a replace and a deletion committed by another instance show in the next request's total", async (db) => {
  await withWorld(db.url, async ({ t, other, acme, acmeToken }) => {
    assert.equal((await count(t, acmeToken)).total, 7);
    await other.fields.insertMany(acme, newFields(3), { now: 2 });
    assert.deepEqual(await count(t, acmeToken), { total: 10, trips: 1 });
    await other.fields.insertMany(acme, newFields(2), { now: 3, replace: true });
    assert.deepEqual(await count(t, acmeToken), { total: 2, trips: 1 });
    await other.fields.insertMany(acme, [], { now: 4, replace: true });
    assert.deepEqual(await count(t, acmeToken), { total: 0, trips: 1 });
  });
});

postgresTest("a membership added or removed by another instance changes the next request's total", async (db) => {
  await withWorld(db.url, async ({ t, other, acme, globex, bothToken, personId }) => {
    assert.equal((await count(t, bothToken)).total, 11);
    assert.equal(await other.organizations.removeMember(globex, personId), true);
    assert.deepEqual(await count(t, bothToken), { total: 7, trips: 1 });
    await other.organizations.addMember(globex, personId, { now: 5 });
    assert.equal(await other.organizations.removeMember(acme, personId), true);
    assert.deepEqual(await count(t, bothToken), { total: 4, trips: 1 });
  });
});

postgresTest("a count narrowed by crop, season or organization is counted for what it asks", async (db) => {
  await withWorld(db.url, async ({ t, bothToken }) => {
    const narrowed = [
      { args: '(crop: "wheat")', total: 7 },
      { args: '(season: "2025")', total: 4 },
      { args: '(crop: "barley", season: "2026")', total: 0 },
      { args: '(crop: "rye")', total: 0 },
    ];
    for (const { args, total } of narrowed) {
      const query = `{ fields${args} { total_count } }`;
      assert.equal((await totalOf(t, bothToken, query, "fields", "total_count")).total, total, args);
    }
  });
});

postgresTest("a count over other organizations than a request's own is as fresh as that request", async (db) => {
  await withWorld(db.url, async ({ t, other, acme, acmeToken, bothToken }) => {
    // The acme-only caller's check read acme's total; the import commits after it.
    assert.equal((await count(t, acmeToken)).total, 7);
    await other.fields.insertMany(acme, newFields(3), { now: 2 });
    const listed = (await gql(t, bothToken, "{ organizations { id slug } }")).body.data!.organizations as
      { id: string; slug: string }[];
    const one = `{ fields(organization_id: "${listed.find((o) => o.slug === "acme")!.id}") { total_count } }`;
    assert.equal((await totalOf(t, bothToken, one, "fields", "total_count")).total, 10);
    const each = "{ organizations { slug fields { total_count } } }";
    const { total: organizations } = await totalOf(t, bothToken, each, "organizations");
    assert.deepEqual(organizations, [{ slug: "acme", fields: { total_count: 10 } }, { slug: "globex", fields: { total_count: 4 } }]);
  });
});

postgresTest("the bearer check lists a user's organizations ascending, whatever order the memberships were made in", async (db) => {
  await withWorld(db.url, async ({ t, acme, globex }) => {
    assert.ok(acme < globex);
    const { client } = await t.seed.client({ grant: "authorization_code" });
    const late = await t.seed.user({ org: "globex" });
    await t.store.organizations.addMember(acme, late.id, { now: t.clock.nowSeconds() });
    const token = await mintAccessToken(t, { client, userId: late.id, grantType: "authorization_code" });
    const access = (await t.store.tokens.findActiveAccess(await tokenKey(t.app.deps, token), t.clock.nowSeconds()))!;
    assert.deepEqual([...access.organizationIds], [acme, globex]);
    assert.equal(access.organizationIds.fieldTotal, 11);
  });
});

postgresTest("the store answers a count from a bearer check only for the very ids that check returned", async (db) => {
  await withWorld(db.url, async ({ t, other, acme, acmeToken }) => {
    const key = await tokenKey(t.app.deps, acmeToken);
    const access = (await t.store.tokens.findActiveAccess(key, t.clock.nowSeconds()))!;
    assert.equal(access.organizationIds.fieldTotal, 7);
    assert.ok(Object.isFrozen(access.organizationIds));
    await other.fields.insertMany(acme, newFields(3, "rye"), { now: 2 });
    // The check's own ids: its request's snapshot, with no round trip.
    assert.deepEqual(await tripsOf(t, () => t.store.fields.count({ organizationIds: access.organizationIds })), { value: 7, trips: 0 });
    // A copy, as another request brings, or a narrower filter over the same ids: counted now.
    assert.deepEqual(await tripsOf(t, () => t.store.fields.count({ organizationIds: [...access.organizationIds] })), { value: 10, trips: 1 });
    assert.equal(await t.store.fields.count({ organizationIds: access.organizationIds, crop: "rye" }), 3);
    assert.equal(await t.store.fields.count({ organizationIds: access.organizationIds, season: "2026" }), 10);
  });
});

const carried = idsWithTotal([1, 2], 9);
const carriedRows: { name: string; filter: FieldFilter; total: number | undefined }[] = [
  { name: "the check's own ids, unfiltered", filter: { organizationIds: carried }, total: 9 },
  { name: "the check's own ids, a filter property left undefined", filter: { organizationIds: carried, crop: undefined }, total: 9 },
  { name: "a copy of the check's ids", filter: { organizationIds: [...carried] }, total: undefined },
  { name: "ids no check returned", filter: { organizationIds: [1, 2] }, total: undefined },
  { name: "the check's ids narrowed by crop", filter: { organizationIds: carried, crop: "wheat" }, total: undefined },
  { name: "the check's ids narrowed by season", filter: { organizationIds: carried, season: "2026" }, total: undefined },
];

for (const row of carriedRows) {
  test(`a count over ${row.name} is ${row.total === undefined ? "read afresh" : "answered from the carried total"}`, () => {
    assert.equal(totalCarried(row.filter), row.total);
  });
}

test("the ids a check returns are frozen and compare and serialise as the plain ids", () => {
  assert.ok(Object.isFrozen(carried));
  assert.deepEqual(carried, [1, 2]);
  assert.equal(JSON.stringify(carried), "[1,2]");
});
