import { test } from "../../helpers/bounded.ts";
import { storeTest } from "../../helpers/stores.ts";
import assert from "node:assert/strict";
import { type Db, openDatabase, type Statement } from "../../../src/store/sqlite/database.ts";
import type { FieldFilter, NewField, Store } from "../../../src/store/contract.ts";
import { createFieldStore, scopeOf } from "../../../src/store/sqlite/fields.ts";
import { createOrganizationStore } from "../../../src/store/sqlite/organizations.ts";
import { createReadViews } from "../../../src/store/sqlite/read_cache.ts";
import { tempDb } from "../../helpers/temp_db.ts";

function field(name: string, crop: string | null = "wheat", season: string | null = "2026"): NewField {
  const ring = [[5, 52], [5.001, 52], [5.001, 52.001], [5, 52]];
  return { name, areaHa: 1.5, crop, season, boundary: JSON.stringify({ type: "Polygon", coordinates: [ring] }), centroid: { lon: 5.0005, lat: 52.0005 } };
}

/** Two organizations with fields: a holds A1 (wheat), A2 (maize), A3 (no crop or season); b holds B1 and B2. */
async function seed(store: Pick<Store, "organizations" | "fields">) {
  const a = await store.organizations.ensure("a", { now: 1 });
  const b = await store.organizations.ensure("b", { now: 1 });
  const { fields } = store;
  await fields.insertMany(a.id, [field("A1"), field("A2", "maize"), field("A3", null, null)], { now: 100 });
  await fields.insertMany(b.id, [field("B1"), field("B2")], { now: 100 });
  return { fields, a: a.id, b: b.id };
}

/** seed() over a SQLite connection of the test's own, for the tests that read the database underneath. */
async function setup() {
  const db = openDatabase(":memory:");
  return { db, ...(await seed({ organizations: createOrganizationStore(db), fields: createFieldStore(db) })) };
}

storeTest("count and page only see the given organizations", async (store) => {
  const { fields, a, b } = await seed(store);
  assert.equal(await fields.count({ organizationIds: [a] }), 3);
  assert.equal(await fields.count({ organizationIds: [b] }), 2);
  assert.equal(await fields.count({ organizationIds: [a, b] }), 5);
  assert.equal(await fields.count({ organizationIds: [a, b, a] }), 5, "an organization listed twice counts once");
  assert.equal(await fields.count({ organizationIds: [] }), 0);
  const page = await fields.page({ organizationIds: [b] }, { afterId: 0, limit: 10 });
  assert.deepEqual(page.map((f) => f.name), ["B1", "B2"]);
  assert.ok(page.every((f) => f.organizationId === b));
  assert.deepEqual((await fields.page({ organizationIds: [b, b] }, { afterId: 0, limit: 10 })).map((f) => f.name), ["B1", "B2"]);
  assert.deepEqual(await fields.page({ organizationIds: [] }, { afterId: 0, limit: 10 }), []);
});

storeTest("crop and season filters narrow count and page", async (store) => {
  const { fields, a, b } = await seed(store);
  assert.equal(await fields.count({ organizationIds: [a], crop: "maize" }), 1);
  assert.equal(await fields.count({ organizationIds: [a], season: "2026" }), 2);
  assert.equal(await fields.count({ organizationIds: [a, b], crop: "wheat", season: "2026" }), 3);
  assert.equal(await fields.count({ organizationIds: [a], crop: "" }), 0, "an empty crop does not match a field without one");
  const page = await fields.page({ organizationIds: [a], crop: "wheat" }, { afterId: 0, limit: 10 });
  assert.deepEqual(page.map((f) => f.name), ["A1"]);
  const both = await fields.page({ organizationIds: [a, b], crop: "wheat", season: "2026" }, { afterId: 0, limit: 10 });
  assert.deepEqual(both.map((f) => f.name), ["A1", "B1", "B2"]);
  const season = await fields.countAndPage({ organizationIds: [a, b], season: "2026" }, { afterId: 0, limit: 2 });
  assert.deepEqual([season.total, season.rows.map((f) => f.name)], [4, ["A1", "A2"]]);
});

storeTest("page continues strictly after the given id in id order", async (store) => {
  const { fields, a, b } = await seed(store);
  const first = await fields.page({ organizationIds: [b, a] }, { afterId: 0, limit: 2 });
  const next = await fields.page({ organizationIds: [b, a] }, { afterId: first.at(-1)!.id, limit: 10 });
  assert.deepEqual([...first, ...next].map((f) => f.name), ["A1", "A2", "A3", "B1", "B2"]);
});

storeTest("countAndPage gives the total of the filter and the page after the given id", async (store) => {
  const { fields, a, b } = await seed(store);
  const first = await fields.countAndPage({ organizationIds: [a, b] }, { afterId: 0, limit: 2 });
  assert.deepEqual([first.total, first.rows.map((f) => f.name)], [5, ["A1", "A2"]]);
  const last = await fields.countAndPage({ organizationIds: [a, b] }, { afterId: first.rows[1]!.id, limit: 10 });
  assert.deepEqual([last.total, last.rows.map((f) => f.name)], [5, ["A3", "B1", "B2"]]);
  const past = await fields.countAndPage({ organizationIds: [a, b] }, { afterId: last.rows.at(-1)!.id, limit: 10 });
  assert.deepEqual(past, { total: 5, rows: [] }, "past the end: the total and no rows");
  assert.deepEqual(await fields.countAndPage({ organizationIds: [] }, { afterId: 0, limit: 10 }), { total: 0, rows: [] });
});

storeTest("findById refuses a field of an organization not in the list", async (store) => {
  const { fields, a, b } = await seed(store);
  const [b1] = await fields.page({ organizationIds: [b] }, { afterId: 0, limit: 1 });
  assert.equal(await fields.findById(b1!.id, [a]), undefined);
  assert.equal(await fields.findById(b1!.id, []), undefined);
  assert.equal((await fields.findById(b1!.id, [b]))?.name, "B1");
  assert.equal(await fields.findById(b1!.id + 1000, [a, b]), undefined);
});

storeTest("rows become domain objects with parsed centroid and timestamps", async (store) => {
  const { fields, a } = await seed(store);
  const [a1, , a3] = await fields.page({ organizationIds: [a] }, { afterId: 0, limit: 3 });
  assert.deepEqual(a1, {
    id: a1!.id, organizationId: a, name: "A1", areaHa: 1.5, crop: "wheat", season: "2026",
    centroid: { lon: 5.0005, lat: 52.0005 }, createdAt: 100, updatedAt: 100,
  });
  assert.ok(!("boundary" in a1!), "pages leave the boundary to boundaries()");
  assert.deepEqual([a3!.crop, a3!.season], [null, null]);
});

storeTest("insertMany with replace deletes the organization's fields and only those, in the same call", async (store) => {
  const { fields, a, b } = await seed(store);
  assert.deepEqual(await fields.insertMany(a, [field("A7", "oats")], { now: 200, replace: true }), { inserted: 1, removed: 3 });
  assert.deepEqual((await fields.page({ organizationIds: [a, b] }, { afterId: 0, limit: 10 })).map((f) => f.name), ["B1", "B2", "A7"]);
  assert.equal(await fields.count({ organizationIds: [a], crop: "wheat" }), 0, "a crop the organization no longer has counts 0");
  assert.equal(await fields.count({ organizationIds: [a], crop: "oats" }), 1);
  assert.deepEqual(await fields.insertMany(a, [], { now: 300, replace: true }), { inserted: 0, removed: 1 });
  assert.equal(await fields.count({ organizationIds: [a] }), 0);
  assert.equal(await fields.count({ organizationIds: [b] }), 2);
});

storeTest("insertMany is all or nothing: a bad row leaves the earlier rows and the replaced ones in place", async (store) => {
  const { fields, a } = await seed(store);
  const many = Array.from({ length: 2500 }, (_, i) => field(`N${i}`));
  const bad = { ...field("bad"), areaHa: -1 }; // area_ha has CHECK (area_ha >= 0) on both backends
  await assert.rejects(fields.insertMany(a, [...many, bad], { now: 200, replace: true }));
  assert.deepEqual((await fields.page({ organizationIds: [a] }, { afterId: 0, limit: 10 })).map((f) => f.name), ["A1", "A2", "A3"]);
  assert.equal(await fields.count({ organizationIds: [a] }), 3);
  // The same rows without the bad one: every one lands, in the file's order.
  assert.deepEqual(await fields.insertMany(a, many, { now: 200, replace: true }), { inserted: 2500, removed: 3 });
  const { total, rows } = await fields.countAndPage({ organizationIds: [a] }, { afterId: 0, limit: 3000 });
  assert.equal(total, 2500);
  assert.deepEqual(rows.map((f) => f.name), many.map((f) => f.name));
});

/** A budget that takes up to `bytes` in total and records every size it was asked for. */
function budget(bytes: number) {
  const asked: number[] = [];
  let left = bytes;
  return {
    asked,
    take(size: number) {
      asked.push(size);
      if (size > left) return false;
      left -= size;
      return true;
    },
  };
}

storeTest("boundaries are read only with a budget, in id order for as long as it takes them", async (store) => {
  const { fields, a, b } = await seed(store);
  const filter = { organizationIds: [a, b] };
  const all = await fields.page(filter, { afterId: 0, limit: 10 }, budget(1_000_000));
  assert.equal(all.length, 5);
  for (const f of all) assert.equal(f.boundary, field(f.name).boundary);
  const size = all[0]!.boundary!.length;
  // Room for two: the third row is refused, and the later rows come back without a boundary too.
  const two = budget(2 * size + 1);
  const cut = await fields.page(filter, { afterId: 0, limit: 10 }, two);
  assert.deepEqual(cut.map((f) => f.boundary !== undefined), [true, true, false, false, false]);
  assert.deepEqual(two.asked, [size, size, size], "asked in id order, and not again once refused");
  const counted = await fields.countAndPage(filter, { afterId: 0, limit: 2 }, budget(size));
  assert.equal(counted.total, 5);
  assert.deepEqual(counted.rows.map((f) => f.boundary), [all[0]!.boundary, undefined]);
  const none = budget(0);
  assert.ok((await fields.countAndPage(filter, { afterId: 0, limit: 10 }, none)).rows.every((f) => f.boundary === undefined));
  assert.deepEqual(none.asked, [size]);
  assert.equal((await fields.findById(all[0]!.id, [a, b], budget(size)))?.boundary, all[0]!.boundary);
  assert.equal((await fields.findById(all[0]!.id, [a, b], budget(size - 1)))?.boundary, undefined);
  assert.equal((await fields.findById(all[0]!.id, [a, b]))?.boundary, undefined);
  assert.equal(await fields.findById(all[0]!.id, [], budget(size)), undefined);
});

storeTest("boundary sizes are bytes, not characters", async (store) => {
  const org = await store.organizations.ensure("a", { now: 1 });
  const named = { ...field("Ähre"), boundary: JSON.stringify({ type: "Polygon", coordinates: [], name: "Grünland" }) };
  await store.fields.insertMany(org.id, [named], { now: 1 });
  const asked = budget(1_000);
  const [row] = await store.fields.page({ organizationIds: [org.id] }, { afterId: 0, limit: 1 }, asked);
  assert.equal(row!.boundary, named.boundary);
  assert.deepEqual(asked.asked, [new TextEncoder().encode(named.boundary).length]);
});

storeTest("ids are never reused: fields inserted after a replace get ids above every earlier one, old ids stop resolving", async (store) => {
  const { fields, a, b } = await seed(store);
  const old = await fields.page({ organizationIds: [a, b] }, { afterId: 0, limit: 100 });
  const top = Math.max(...old.map((f) => f.id));
  // b holds the highest ids; replacing its fields deletes them before inserting.
  await fields.insertMany(b, [field("B3"), field("B4")], { now: 200, replace: true });
  const fresh = await fields.page({ organizationIds: [b] }, { afterId: 0, limit: 100 });
  assert.deepEqual(fresh.map((f) => f.name), ["B3", "B4"]);
  assert.ok(fresh.every((f) => f.id > top), `${fresh.map((f) => f.id)} vs ${top}`);
  for (const gone of old.filter((f) => f.organizationId === b)) assert.equal(await fields.findById(gone.id, [a, b]), undefined);
  // Across tenants too: emptying b and importing into a never hands out b's old ids.
  await fields.insertMany(b, [], { now: 300, replace: true });
  await fields.insertMany(a, [field("A9")], { now: 300 });
  const [next] = await fields.page({ organizationIds: [a] }, { afterId: top, limit: 10 });
  assert.equal(next?.name, "A9");
  assert.ok(next!.id > Math.max(...fresh.map((f) => f.id)));
});

const planRows: { name: string; filter: FieldFilter; index: RegExp }[] = [
  { name: "no filter", filter: { organizationIds: [1] }, index: /USING COVERING INDEX fields_by_organization\b/ },
  { name: "crop", filter: { organizationIds: [1], crop: "wheat" }, index: /USING COVERING INDEX fields_by_organization_crop/ },
  { name: "season", filter: { organizationIds: [1], season: "2026" }, index: /USING COVERING INDEX fields_by_organization_season/ },
  { name: "crop and season", filter: { organizationIds: [1], crop: "wheat", season: "2026" }, index: /USING INDEX fields_by_organization/ },
];

for (const row of planRows) {
  test(`count with ${row.name} is a search on an index, not a table scan`, async () => {
    const { db } = await setup();
    const { where, params } = scopeOf(row.filter);
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT COUNT(*) AS n FROM fields WHERE ${where}`).all(...params) as { detail: string }[];
    const details = plan.map((line) => line.detail).join("\n");
    assert.match(details, /SEARCH fields/);
    assert.match(details, row.index);
  });
}

/** The count straight from the fields table, to check the trigger-kept field_counts against. */
function scanCount(db: ReturnType<typeof openDatabase>, filter: FieldFilter): number {
  const { where, params } = scopeOf(filter);
  return Number((db.prepare(`SELECT COUNT(*) AS n FROM fields WHERE ${where}`).get(...params) as { n: number }).n);
}

test("count from field_counts matches a scan after inserts, updates, deletes and an organization cascade", async () => {
  const { db, fields, a, b } = await setup();
  await fields.insertMany(a, [field("A4", "", ""), field("A5", "maize", null)], { now: 100 });
  const filters: FieldFilter[] = [
    { organizationIds: [a, b] }, { organizationIds: [a] }, { organizationIds: [a], crop: "wheat" },
    { organizationIds: [a], crop: "" }, { organizationIds: [a], season: "" }, { organizationIds: [a, b], season: "2026" },
    { organizationIds: [a], crop: "maize", season: "2026" }, { organizationIds: [b], crop: "wheat", season: "2026" },
  ];
  const check = async (when: string) => {
    for (const filter of filters) assert.equal(await fields.count(filter), scanCount(db, filter), `${when}: ${JSON.stringify(filter)}`);
    // Row for row: a crop and season an organization no longer has leaves no row behind (not even one at 0).
    assert.deepEqual(
      db.prepare("SELECT organization_id, crop_null, crop, season_null, season, n FROM field_counts ORDER BY 1, 2, 3, 4, 5").all().map((r) => ({ ...r })),
      db.prepare(`SELECT organization_id, crop IS NULL AS crop_null, IFNULL(crop, '') AS crop, season IS NULL AS season_null,
        IFNULL(season, '') AS season, COUNT(*) AS n FROM fields GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`).all().map((r) => ({ ...r })),
      when,
    );
  };
  await check("after inserts");
  // An empty-string filter must not count NULL crops or seasons.
  assert.equal(await fields.count({ organizationIds: [a], crop: "" }), 1);
  db.exec("UPDATE fields SET crop = 'maize', season = NULL WHERE name = 'A1'");
  db.exec(`UPDATE fields SET organization_id = ${b} WHERE name = 'A2'`);
  await check("after updates");
  db.exec("DELETE FROM fields WHERE name = 'A3'");
  await check("after a delete");
  db.exec(`DELETE FROM organizations WHERE id = ${b}`);
  await check("after the organization cascade");
  assert.equal(await fields.count({ organizationIds: [b] }), 0);
});

/**
 * A connection whose page query lets another connection commit `commit` just before it runs: the moment between
 * the count and the page where a `fields import --replace` from the CLI can land.
 */
function commitBeforePage(db: Db, commit: () => Promise<unknown>): { db: Db; landed: () => Promise<unknown> } {
  let landed: Promise<unknown> = Promise.resolve();
  const hook = (statement: Statement): Statement =>
    new Proxy(statement, {
      get(target, key) {
        if (key === "all") {
          return (...args: Parameters<Statement["all"]>) => {
            landed = commit();
            return target.all(...args);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return {
    db: { ...db, prepare: (sql) => (/^SELECT id, .* FROM fields WHERE .* LIMIT \?$/.test(sql) ? hook(db.prepare(sql)) : db.prepare(sql)) },
    landed: () => landed,
  };
}

test("countAndPage reads the total and the rows in one snapshot while a replace commits between them", async () => {
  const { path, cleanup } = tempDb("fieldgate-fields-");
  const db = openDatabase(path);
  const importer = openDatabase(path);
  try {
    const org = (await createOrganizationStore(db).ensure("a", { now: 1 })).id;
    await createFieldStore(db).insertMany(org, [field("A1"), field("A2"), field("A3")], { now: 1 });
    // Each replace leaves two fields more than the one before. Its insert is synchronous inside insertMany, so it
    // has committed before the hooked page query runs.
    let size = 3;
    const replace = () => {
      size += 2;
      const replacement = Array.from({ length: size }, (_, i) => field(`R${size}-${i}`));
      return createFieldStore(importer).insertMany(org, replacement, { now: 2, replace: true });
    };
    const hooked = commitBeforePage(db, replace);
    const fields = createFieldStore(hooked.db);
    const filter = { organizationIds: [org] };
    const everything = { afterId: 0, limit: 100 };

    const together = await fields.countAndPage(filter, everything);
    await hooked.landed();
    assert.equal(together.total, 3);
    assert.deepEqual(together.rows.map((f) => f.name), ["A1", "A2", "A3"], "the rows of the same moment as the total");

    // Read apart, the same interleaving gives a total of one moment and rows of the next.
    const total = await fields.count(filter);
    const rows = await fields.page(filter, everything);
    await hooked.landed();
    assert.deepEqual([total, rows.length], [5, 7]);

    const again = await fields.countAndPage(filter, everything);
    await hooked.landed();
    assert.deepEqual([again.total, again.rows.length], [7, 7]);
  } finally {
    importer.close();
    db.close();
    cleanup();
  }
});

/** Two connections to one file: the store under test, and another process (the CLI's `fields import`). */
async function withImporter(run: (s: { db: Db; fields: ReturnType<typeof createFieldStore>; other: ReturnType<typeof createFieldStore>; org: number }) => Promise<void>) {
  const { path, cleanup } = tempDb("fieldgate-count-cache-");
  const db = openDatabase(path);
  const importer = openDatabase(path);
  try {
    const org = (await createOrganizationStore(db).ensure("a", { now: 1 })).id;
    const fields = createFieldStore(db);
    await fields.insertMany(org, [field("A1"), field("A2", "maize")], { now: 1 });
    await run({ db, fields, other: createFieldStore(importer), org });
  } finally {
    importer.close();
    db.close();
    cleanup();
  }
}

/** Counts the field_counts statements the store runs (the SQL it prepares on this connection). */
function countingStatements(db: Db) {
  const counted = { runs: 0 };
  const spied: Db = {
    ...db,
    prepare(sql) {
      const statement = db.prepare(sql);
      if (!sql.includes("FROM field_counts")) return statement;
      return new Proxy(statement, {
        get(target, name) {
          const value = Reflect.get(target, name, target);
          if (name !== "get" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
          return (...args: unknown[]) => {
            counted.runs++;
            return value.apply(target, args);
          };
        },
      }) as Statement;
    },
  };
  return { db: spied, counted };
}

test("count under one view runs its statement once per filter; without one it reads under the store's current view", async () => {
  await withImporter(async ({ db, org }) => {
    const { db: spied, counted } = countingStatements(db);
    const fields = createFieldStore(spied);
    const view = createReadViews(db)();
    assert.equal(await fields.count({ organizationIds: [org] }, view), 2);
    assert.equal(await fields.count({ organizationIds: [org] }, view), 2);
    assert.equal(counted.runs, 1);
    assert.equal(await fields.count({ organizationIds: [org], crop: "maize" }, view), 1);
    assert.equal(await fields.count({ organizationIds: [org], crop: "maize" }, view), 1);
    assert.equal(counted.runs, 2);
    assert.equal(await fields.count({ organizationIds: [org] }), 2);
    assert.equal(await fields.count({ organizationIds: [org] }), 2);
    assert.equal(counted.runs, 3, "the store's own view is a new object: one load, then kept");
    await fields.insertMany(org, [field("D1")], { now: 6 });
    assert.equal(await fields.count({ organizationIds: [org] }), 3, "a write moves the current view");
    assert.equal(counted.runs, 4);
  });
});

test("a count kept under a view is not served to a view taken after another connection imported", async () => {
  await withImporter(async ({ db, fields, other, org }) => {
    const views = createReadViews(db);
    const before = views();
    assert.equal(await fields.count({ organizationIds: [org] }, before), 2);
    await other.insertMany(org, [field("B1"), field("B2"), field("B3")], { now: 2 });
    const after = views();
    assert.notEqual(after, before);
    assert.equal(await fields.count({ organizationIds: [org] }, after), 5);
    // A request that took its view before the import still reads as of its own moment.
    assert.equal(await fields.count({ organizationIds: [org] }, before), 2);
  });
});

test("a count kept under a view is not served after this connection's own replace", async () => {
  await withImporter(async ({ db, fields, org }) => {
    const views = createReadViews(db);
    assert.equal(await fields.count({ organizationIds: [org] }, views()), 2);
    await fields.insertMany(org, [field("C1")], { now: 3, replace: true });
    assert.equal(await fields.count({ organizationIds: [org] }, views()), 1);
  });
});

test("filters that a joined or partial key would confuse are kept apart under one view", async () => {
  await withImporter(async ({ db, fields, org }) => {
    // Counts chosen so that any two of these filters sharing a key would give a wrong number.
    await fields.insertMany(org, [
      field("S1", "a", "b,c"), field("S2", "a,b", "c"), field("S3", "a,b", "c"),
      field("W1", "wheat", "2025"), field("W2", "wheat", "2026"),
    ], { now: 4 });
    const view = createReadViews(db)();
    const counts = async () => [
      await fields.count({ organizationIds: [org], crop: "a", season: "b,c" }, view),
      await fields.count({ organizationIds: [org], crop: "a,b", season: "c" }, view),
      await fields.count({ organizationIds: [org], crop: "wheat" }, view),
      await fields.count({ organizationIds: [org], crop: "wheat", season: "2025" }, view),
      await fields.count({ organizationIds: [org], season: "2026" }, view),
      await fields.count({ organizationIds: [org] }, view),
    ];
    const expected = [1, 2, 3, 1, 3, 7];
    assert.deepEqual(await counts(), expected);
    assert.deepEqual(await counts(), expected, "the same again, now from what the view kept");
  });
});

test("a count read inside a group commit that rolls back is not kept, though the view is the same after it", async () => {
  await withImporter(async ({ db, fields, org }) => {
    const views = createReadViews(db);
    let inside: ReturnType<typeof views> | undefined;
    let seenInside: number | undefined;
    await assert.rejects(db.transactionBatched(() => {
      db.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat,
        created_at, updated_at) SELECT organization_id, name || '+', area_ha, crop, season, boundary, centroid_lon,
        centroid_lat, created_at, updated_at FROM fields`).run();
      inside = views();
      void fields.count({ organizationIds: [org] }, inside).then((n) => (seenInside = n));
      throw new Error("abort");
    }), /abort/);
    assert.equal(seenInside, 4, "inside, the uncommitted rows were counted");
    // total_changes counted the rolled-back rows, so the stamp after the rollback is the one taken inside.
    assert.equal(views(), inside);
    assert.equal(await fields.count({ organizationIds: [org] }, inside), 2);
  });
});

test("a count loaded under a view after another connection committed is not kept under that view", async () => {
  await withImporter(async ({ db, other, org }) => {
    const { db: spied, counted } = countingStatements(db);
    const fields = createFieldStore(spied);
    const view = createReadViews(db)();
    await other.insertMany(org, [field("B1")], { now: 5 });
    // The request took its view before the import; what it loads now is a later moment, returned but not kept.
    assert.equal(await fields.count({ organizationIds: [org] }, view), 3);
    assert.equal(await fields.count({ organizationIds: [org] }, view), 3);
    assert.equal(counted.runs, 2);
  });
});
