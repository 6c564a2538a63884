// The PostgreSQL field store where it differs from SQLite's: snapshots across pools, trigger-kept counts under
// concurrent writers, batched imports. The behaviour both backends share is in test/store/fields.test.ts.
import assert from "node:assert/strict";
import {
  openPostgres,
  type PgClient,
  type PgQueryable,
  type PgRow,
  type PgValue,
} from "../../../src/store/postgres/connect.ts";
import { migratePostgres } from "../../../src/store/postgres/migrations.ts";
import { createPgFieldStore } from "../../../src/store/postgres/fields.ts";
import type { NewField } from "../../../src/store/contract.ts";
import { postgresTest } from "../../helpers/postgres.ts";

/** Two pools on one database: the store under test, and another instance (or the CLI) writing meanwhile. */
async function withPools(url: string, fn: (pg: PgClient, other: PgClient) => Promise<void>): Promise<void> {
  const pg = await openPostgres(url);
  const other = await openPostgres(url);
  try {
    await migratePostgres(pg);
    await fn(pg, other);
  } finally {
    await other.close();
    await pg.close();
  }
}

async function organization(pg: PgClient, slug: string): Promise<number> {
  const [row] = await pg.query<{ id: number }>(
    "INSERT INTO organizations (slug, name, created_at) VALUES ($1, $1, 1) RETURNING id",
    [slug],
  );
  return row!.id;
}

/** The fields of one generation of a file: names and boundaries say which, and each generation has a size of its own. */
function generation(gen: number, size = 3 + 2 * (gen % 4)): NewField[] {
  return Array.from({ length: size }, (_, i) => ({
    name: `G${gen}-${i}`,
    areaHa: 1,
    crop: "wheat",
    season: "2026",
    boundary: JSON.stringify({ type: "Polygon", coordinates: [], generation: gen }),
    centroid: { lon: 5, lat: 52 },
  }));
}

const generationOf = (name: string) => Number(/^G(\d+)-/.exec(name)![1]);

/** `pg` with `before` awaited ahead of every statement whose text matches `pattern`, inside transactions too. */
function hooked(pg: PgClient, pattern: RegExp, before: (text: string) => Promise<unknown>): PgClient {
  const wrap = (q: PgQueryable): PgQueryable => ({
    exec: (script) => q.exec(script),
    async query<T extends PgRow>(text: string, params?: readonly PgValue[]) {
      if (pattern.test(text)) await before(text);
      return await q.query<T>(text, params);
    },
  });
  return { ...pg, ...wrap(pg), transaction: (fn, options) => pg.transaction((tx) => fn(wrap(tx)), options) };
}

const everything = { afterId: 0, limit: 1000 };
const unlimited = { take: () => true };

postgresTest("countAndPage's total and rows agree while another pool commits replaces", async ({ url }) => {
  await withPools(url, async (pg, other) => {
    const org = await organization(pg, "a");
    const fields = createPgFieldStore(pg);
    const importer = createPgFieldStore(other);
    await importer.insertMany(org, generation(0), { now: 1 });
    const replaces = 30;
    let committed = 0;
    const replacing = (async () => {
      for (let gen = 1; gen <= replaces; gen++) {
        await importer.insertMany(org, generation(gen), { now: gen, replace: true });
        committed = gen;
      }
    })();
    const seen = new Set<number>();
    let reads = 0;
    while (committed < replaces) {
      // Alternately the one-statement read and the two-statement read of rows, then their boundaries.
      const withBoundaries = reads++ % 2 === 1;
      const { total, rows } = await fields.countAndPage(
        { organizationIds: [org] },
        everything,
        withBoundaries ? unlimited : undefined,
      );
      const gens = new Set(rows.map((f) => generationOf(f.name)));
      assert.equal(gens.size, 1, `rows of one generation, not ${[...gens]}`);
      const [gen] = gens;
      assert.deepEqual(
        [total, rows.length],
        [generation(gen!).length, generation(gen!).length],
        "the total of the rows' moment",
      );
      if (withBoundaries) {
        assert.deepEqual(
          rows.map((f) => f.boundary && JSON.parse(f.boundary).generation),
          rows.map(() => gen),
        );
      }
      seen.add(gen!);
    }
    await replacing;
    assert.ok(seen.size > 1, `the reads saw the replaces land (generations ${[...seen]})`);
  });
});

postgresTest(
  "a row and its boundary come from one snapshot though a replace commits between the two reads",
  async ({ url }) => {
    await withPools(url, async (pg, other) => {
      const org = await organization(pg, "a");
      const importer = createPgFieldStore(other);
      await importer.insertMany(org, generation(0), { now: 1 });
      let gen = 0;
      const replace = () => importer.insertMany(org, generation(++gen), { now: gen, replace: true });
      // The importer's replace commits after the rows and their sizes are read, before their boundaries are.
      const fields = createPgFieldStore(hooked(pg, /^SELECT id, boundary FROM fields/, replace));
      const filter = { organizationIds: [org] };
      const expectOld = (rows: { name: string; boundary?: string }[], from: number) => {
        assert.deepEqual(rows.map((f) => f.name), generation(from).map((f) => f.name));
        assert.deepEqual(rows.map((f) => f.boundary), generation(from).map((f) => f.boundary));
      };

      expectOld(await fields.page(filter, everything, unlimited), 0);
      const together = await fields.countAndPage(filter, everything, unlimited);
      assert.equal(together.total, generation(1).length);
      expectOld(together.rows, 1);
      const [first] = generation(2);
      const [found] = (await fields.page(filter, { afterId: 0, limit: 1 })).filter((f) =>
        f.name === first!.name
      );
      assert.ok(found, "the third generation is there before the lookup");
      const byId = await fields.findById(found.id, [org], unlimited);
      assert.equal(
        byId?.boundary,
        first!.boundary,
        "found, and with its boundary, though deleted before the boundary read",
      );
      assert.equal(gen, 3, "each read let a replace commit in between");
      assert.equal(await fields.findById(found.id, [org]), undefined, "the replace did commit");
    });
  },
);

postgresTest(
  "count reads what another pool committed at once: nothing is cached across requests",
  async ({ url }) => {
    await withPools(url, async (pg, other) => {
      const org = await organization(pg, "a");
      const fields = createPgFieldStore(pg);
      assert.equal(await fields.count({ organizationIds: [org] }), 0);
      await createPgFieldStore(other).insertMany(org, generation(0), { now: 1 });
      assert.equal(await fields.count({ organizationIds: [org] }), generation(0).length);
      await createPgFieldStore(other).insertMany(org, [], { now: 2, replace: true });
      assert.equal(await fields.count({ organizationIds: [org] }), 0);
    });
  },
);

postgresTest(
  "replaces of one organization from two pools take turns: the fields of one file remain, never both",
  async ({ url }) => {
    await withPools(url, async (pg, other) => {
      const org = await organization(pg, "a");
      const stores = [createPgFieldStore(pg), createPgFieldStore(other)];
      for (let round = 0; round < 10; round++) {
        // Sizes 3, 5, 7, …: a union of two files would show as a total no single file has.
        await Promise.all(
          stores.map((store, i) =>
            store.insertMany(org, generation(2 * round + i), { now: round, replace: true })
          ),
        );
        const { total, rows } = await stores[0]!.countAndPage({ organizationIds: [org] }, everything);
        const gens = new Set(rows.map((f) => generationOf(f.name)));
        assert.equal(gens.size, 1, `round ${round}: one file's fields, not ${[...gens]}`);
        assert.equal(total, generation([...gens][0]!).length);
      }
    });
  },
);

postgresTest("a large import is a few multi-row INSERT statements, in the file's order", async ({ url }) => {
  await withPools(url, async (pg) => {
    const org = await organization(pg, "a");
    const inserts: string[] = [];
    const fields = createPgFieldStore(
      hooked(pg, /^INSERT INTO fields/, (text) => Promise.resolve(inserts.push(text))),
    );
    const many = generation(0, 2500);
    assert.deepEqual(await fields.insertMany(org, many, { now: 1 }), { inserted: 2500, removed: 0 });
    assert.equal(inserts.length, 3, "1,000 rows a statement");
    const { total, rows } = await fields.countAndPage({ organizationIds: [org] }, {
      afterId: 0,
      limit: 3000,
    });
    assert.equal(total, 2500);
    assert.deepEqual(rows.map((f) => f.name), many.map((f) => f.name));
    // Large boundaries: a statement holds about a megabyte of them, so three of 400 kB take two statements.
    inserts.length = 0;
    const big = generation(1, 3).map((f) => ({
      ...f,
      boundary: JSON.stringify({ type: "Polygon", pad: "x".repeat(400_000) }),
    }));
    await fields.insertMany(org, big, { now: 2, replace: true });
    assert.equal(inserts.length, 2);
    const read = await fields.page({ organizationIds: [org] }, everything, unlimited);
    assert.deepEqual(read.map((f) => f.boundary), big.map((f) => f.boundary));
  });
});

/** Tiny deterministic generator, so a failing interleaving's operations can be replayed. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const RECOUNT = `SELECT organization_id, (crop IS NULL)::integer AS crop_null, COALESCE(crop, '') AS crop,
  (season IS NULL)::integer AS season_null, COALESCE(season, '') AS season, count(*) AS n
  FROM fields GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`;
const COUNTS =
  "SELECT organization_id, crop_null, crop, season_null, season, n FROM field_counts ORDER BY 1, 2, 3, 4, 5";

postgresTest(
  "field_counts equals a recount after connections insert, move and delete the same crops at once",
  async ({ url }) => {
    await withPools(url, async (pg) => {
      const orgs = [await organization(pg, "a"), await organization(pg, "b")];
      const crops = ["wheat", null, ""];
      const seasons = ["2026", null];
      const insert =
        `INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat,
      created_at, updated_at) SELECT $1, 'f', 1, $2, $3, '{}', 0, 0, 0, 0 FROM generate_series(1, $4)`;
      // Straight statements, not the store's imports (which take turns per organization): every trigger path races.
      const operations: [string, (pick: () => number) => PgValue[]][] = [
        [
          insert,
          (
            pick,
          ) => [
            orgs[Math.floor(pick() * 2)]!,
            crops[Math.floor(pick() * 3)]!,
            seasons[Math.floor(pick() * 2)]!,
            1 + Math.floor(pick() * 3),
          ],
        ],
        [
          "DELETE FROM fields WHERE id IN (SELECT id FROM fields WHERE organization_id = $1 ORDER BY random() LIMIT $2)",
          (pick) => [orgs[Math.floor(pick() * 2)]!, 1 + Math.floor(pick() * 3)],
        ],
        [
          "UPDATE fields SET crop = $2, season = $3 WHERE id IN (SELECT id FROM fields ORDER BY random() LIMIT $1)",
          (
            pick,
          ) => [1 + Math.floor(pick() * 2), crops[Math.floor(pick() * 3)]!, seasons[Math.floor(pick() * 2)]!],
        ],
        [
          "UPDATE fields SET organization_id = $1 WHERE id IN (SELECT id FROM fields ORDER BY random() LIMIT 1)",
          (pick) => [orgs[Math.floor(pick() * 2)]!],
        ],
      ];
      const worker = async (seed: number) => {
        const pick = lcg(seed);
        for (let i = 0; i < 150; i++) {
          const [sql, params] = operations[Math.floor(pick() * operations.length)]!;
          const values = params(pick);
          // A deadlock between two of these rolls one back; the retry runs it again.
          await pg.transaction((tx) => tx.query(sql, values), { retries: 20 });
        }
      };
      await Promise.all([1, 2, 3, 4].map(worker));
      const recount = await pg.query(RECOUNT);
      assert.ok(recount.length > 0, "some fields are left to count");
      assert.deepEqual(
        await pg.query(COUNTS),
        recount,
        "one row per key with fields, none at zero, each count exact",
      );
      // And with the organizations gone by their cascade.
      await pg.query("DELETE FROM organizations WHERE id = $1", [orgs[0]!]);
      assert.deepEqual(await pg.query(COUNTS), await pg.query(RECOUNT));
    });
  },
);
