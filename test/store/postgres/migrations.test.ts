// PostgreSQL migrations: applied once, safe when instances start together, refusing newer and foreign databases.
import assert from "node:assert/strict";
import { ForeignDatabaseError, SchemaTooNewError } from "../../../src/store/errors.ts";
import { openDatabase } from "../../../src/store/sqlite/database.ts";
import { openPostgres, type PgClient } from "../../../src/store/postgres/connect.ts";
import { migratePostgres, PG_MIGRATIONS } from "../../../src/store/postgres/migrations.ts";
import { createTestDatabase, postgresTest, requirePostgres } from "../../helpers/postgres.ts";

async function withClient<T>(url: string, fn: (pg: PgClient) => Promise<T>): Promise<T> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    return await fn(pg);
  } finally {
    await pg.close();
  }
}

const ALL = PG_MIGRATIONS.map((m) => m.name);

postgresTest(
  "a new database gets every step once, recorded with SQLite's versions and names",
  async ({ url }) => {
    await withClient(url, async (pg) => {
      assert.deepEqual(await migratePostgres(pg, { now: 1_700_000_000_000 }), {
        applied: ALL,
        version: ALL.length,
      });
      assert.deepEqual(await migratePostgres(pg), { applied: [], version: ALL.length });
      assert.deepEqual(
        await pg.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version"),
        ALL.map((name, i) => ({ version: i + 1, name, applied_at: 1_700_000_000 })),
      );
    });
  },
);

postgresTest(
  "five instances migrating one new database at once all succeed and leave one schema",
  async ({ url }) => {
    const reports = await Promise.all(
      Array.from({ length: 5 }, () => withClient(url, (pg) => migratePostgres(pg))),
    );
    assert.deepEqual(reports.map((r) => r.version), [9, 9, 9, 9, 9].map(() => ALL.length));
    assert.deepEqual(
      reports.map((r) => r.applied).filter((applied) => applied.length > 0),
      [ALL],
      "exactly one applied the steps",
    );
    await withClient(url, async (pg) => {
      const [row] = await pg.query(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT version) AS versions FROM schema_migrations",
      );
      assert.deepEqual(row, { n: ALL.length, versions: ALL.length });
    });
  },
);

postgresTest("a database migrated by a newer fieldgate is refused, as on SQLite", async ({ url }) => {
  await withClient(url, async (pg) => {
    await migratePostgres(pg);
    await pg.query(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'from the future', 0)",
      [ALL.length + 1],
    );
    await assert.rejects(
      migratePostgres(pg),
      (error: unknown) =>
        error instanceof SchemaTooNewError && /newer than this fieldgate/.test(error.message),
    );
  });
});

postgresTest(
  "another application's database is refused, named without its password, and left as it was",
  async ({ url }) => {
    const withPassword = new URL(url);
    withPassword.password = "s3cret";
    await withClient(url, async (pg) => {
      await pg.exec("CREATE TABLE notes (body text)");
    });
    // trust authentication ignores the password; the message must not carry it anyway.
    await withClient(withPassword.href, async (pg) => {
      await assert.rejects(
        migratePostgres(pg),
        (error: unknown) =>
          error instanceof ForeignDatabaseError && error.message.includes("is not a fieldgate database") &&
          !error.message.includes("s3cret"),
      );
      const tables = await pg.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()");
      assert.deepEqual(tables, [{ tablename: "notes" }]);
    });
  },
);

postgresTest("usernames collide when they differ in ASCII case only, on both backends", async ({ url }) => {
  const sqlite = openDatabase(":memory:");
  const insert = "INSERT INTO users (username, kind, created_at) VALUES ($1, 'person', 0)";
  try {
    await withClient(url, async (pg) => {
      await migratePostgres(pg);
      for (const name of ["alice", "émile"]) {
        await pg.query(insert, [name]);
        sqlite.prepare(insert.replace("$1", "?")).run(name);
      }
      // "ÉMILE" differs from "émile" outside ASCII: SQLite's NOCASE keeps them apart, and so must PostgreSQL.
      for (const [name, taken] of [["ALICE", true], ["Émile", false]] as const) {
        const onPg = await pg.query(insert, [name]).then(
          () => false,
          (error: { code?: string }) => error.code === "23505",
        );
        let onSqlite = false;
        try {
          sqlite.prepare(insert.replace("$1", "?")).run(name);
        } catch (error) {
          onSqlite = /UNIQUE constraint failed/.test(String(error));
        }
        assert.deepEqual({ name, onPg, onSqlite }, { name, onPg: taken, onSqlite: taken });
      }
    });
  } finally {
    sqlite.close();
  }
});

postgresTest(
  "field_counts follows inserts, updates and deletes as SQLite's triggers do, dropping rows at zero",
  async ({ url }) => {
    const sqlite = openDatabase(":memory:");
    const steps = [
      "INSERT INTO organizations (id, slug, name, created_at) VALUES (1, 'a', 'A', 0)",
      ...[["wheat", "2025"], ["wheat", "2025"], [null, "2025"], ["oats", null]].map(([crop, season], i) =>
        `INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat, created_at,
        updated_at) VALUES (1, 'f${i}', 1, ${crop ? `'${crop}'` : "NULL"}, ${
          season ? `'${season}'` : "NULL"
        }, '{}', 0, 0, 0, 0)`
      ),
      "UPDATE fields SET crop = 'barley' WHERE name = 'f0'",
      "DELETE FROM fields WHERE name = 'f3'",
    ];
    const counts =
      "SELECT organization_id, crop_null, crop, season_null, season, n FROM field_counts ORDER BY crop, season";
    try {
      await withClient(url, async (pg) => {
        await migratePostgres(pg);
        for (const sql of steps) {
          sqlite.exec(sql);
          await pg.exec(sql);
        }
        const expected = sqlite.prepare(counts).all().map((row) => ({ ...row }));
        assert.equal(
          expected.length,
          3,
          "barley, wheat and the NULL crop remain; oats went with its last field",
        );
        assert.deepEqual(await pg.query(counts), expected);
      });
    } finally {
      sqlite.close();
    }
  },
);

// The tests' migrated databases are copies of one template (test/helpers/postgres.ts): each must be at the current
// version, and a row written in one must not appear in the next.
postgresTest(
  "a test database created migrated is at the current version, and a copy of its own",
  async ({ url }) => {
    await withClient(url, async (pg) => {
      assert.deepEqual(await migratePostgres(pg), { applied: [], version: ALL.length });
      await pg.query("INSERT INTO organizations (slug, name, created_at) VALUES ('copy-check', 'Copy check', 1)");
    });
    const next = await createTestDatabase(requirePostgres(), { migrated: true });
    try {
      await withClient(next.url, async (pg) => {
        assert.deepEqual(await pg.query("SELECT slug FROM organizations WHERE slug = 'copy-check'"), []);
      });
    } finally {
      await next.drop();
    }
  },
  { migrated: true },
);

postgresTest(
  "tokens' kind and grant type become domains without rewriting an older database's table, and still refuse other values",
  async ({ url }) => {
    const step = PG_MIGRATIONS.findIndex((m) => m.name === "token kinds as domains");
    assert.ok(step > 0);
    await withClient(url, async (pg) => {
      // The database as the fieldgate before the step left it, with a token in it.
      await pg.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)");
      for (const [i, m] of PG_MIGRATIONS.slice(0, step).entries()) {
        await pg.exec(m.sql);
        await pg.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)", [i + 1, m.name]);
      }
      await pg.exec(`INSERT INTO users (id, username, kind, created_at) VALUES (1, 'robot', 'integration', 0);
        INSERT INTO clients (id, client_id, secret_hash, name, grant_type, redirect_uri, scope, integration_user_id, created_at)
          VALUES (1, 'cc', 'h', 'CC', 'client_credentials', '', 'fields:read', 1, 0);
        INSERT INTO tokens (token_hash, kind, grant_type, client_id, user_id, scope, issued_at, expires_at)
          VALUES ('t1', 'refresh', 'client_credentials', 1, 1, 'fields:read', 0, 60)`);
      // Each relation's file: a rewrite of the table or an index would give it a new one.
      const files = () => pg.query("SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'tokens%' ORDER BY relname");
      const before = await files();
      assert.deepEqual(await migratePostgres(pg), { applied: ALL.slice(step), version: ALL.length });
      assert.deepEqual(await files(), before, "the step rewrote neither the table nor an index");
      assert.deepEqual(await pg.query("SELECT kind, grant_type FROM tokens"), [{ kind: "refresh", grant_type: "client_credentials" }]);
      assert.deepEqual(
        await pg.query(`SELECT column_name, domain_name FROM information_schema.columns
          WHERE table_name = 'tokens' AND column_name IN ('kind', 'grant_type') ORDER BY column_name`),
        [{ column_name: "grant_type", domain_name: "token_grant_type" }, { column_name: "kind", domain_name: "token_kind" }],
      );
      const insert = (kind: string, grantType: string) =>
        pg.query(`INSERT INTO tokens (token_hash, kind, grant_type, client_id, user_id, scope, issued_at, expires_at)
          VALUES ($1, $2, $3, 1, 1, 'fields:read', 0, 60)`, [`t-${kind}-${grantType}`, kind, grantType]);
      await assert.rejects(insert("bearer", "client_credentials"), /violates check constraint "token_kind_check"/);
      await assert.rejects(insert("access", "password"), /violates check constraint "token_grant_type_check"/);
      await insert("access", "refresh_token");
      assert.equal((await pg.query("SELECT 1 FROM tokens")).length, 2);
    });
  },
);
