// `migrate` on a SQLite file and on a PostgreSQL URL: what it applies, what it reports, what it refuses.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { test } from "../helpers/bounded.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { cliHarness } from "./harness.ts";

const ALL = MIGRATIONS.map((m) => m.name);

test("migrate creates and migrates a new SQLite file, then finds nothing left to apply", async () => {
  const h = cliHarness();
  const path = join(h.dir, "new", "fieldgate.db");
  assert.deepEqual(await h.json(["migrate", "--db", path]), {
    database: path,
    applied: ALL,
    version: ALL.length,
  });
  assert.ok(existsSync(path) && !existsSync(h.dbPath), "the file named by --db, and no other");
  assert.deepEqual(await h.json(["migrate", "--db", path]), {
    database: path,
    applied: [],
    version: ALL.length,
  });
  const text = await h.run(["migrate", "--db", path]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /is up to date \(schema version \d+\)/);
});

test("migrate refuses a SQLite file a newer fieldgate migrated, with exit 1", async () => {
  const h = cliHarness();
  h.createDatabase();
  const raw = new DatabaseSync(h.dbPath);
  raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)")
    .run(ALL.length + 1);
  raw.close();
  const result = await h.run(["migrate"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /newer than this fieldgate understands/);
});

test("migrate --help describes both kinds of database", async () => {
  const result = await cliHarness().run(["migrate", "--help"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /Usage: fieldgate migrate/);
  assert.match(result.stdout, /postgres:\/\//);
});

postgresTest(
  "migrate applies the PostgreSQL schema once and reports the database without its password",
  async ({ url }) => {
    const h = cliHarness();
    const withPassword = new URL(url);
    withPassword.password = "s3cret";
    const shown = new URL(url);
    shown.search = "";
    const first = await h.json(["migrate", "--db", withPassword.href]);
    assert.deepEqual(first, { database: shown.href, applied: ALL, version: ALL.length });
    assert.deepEqual(await h.json(["migrate", "--db", url]), {
      database: shown.href,
      applied: [],
      version: ALL.length,
    });
    const pg = await openPostgres(url, { max: 1 });
    try {
      assert.deepEqual(await pg.query("SELECT COUNT(*) AS n FROM schema_migrations"), [{ n: ALL.length }]);
    } finally {
      await pg.close();
    }
  },
);

postgresTest(
  "migrate names an unreachable PostgreSQL server without its password and exits 1",
  async ({ url }) => {
    const unreachable = new URL(url);
    unreachable.password = "s3cret";
    unreachable.pathname = "/no_such_database";
    const result = await cliHarness().run(["migrate", "--db", unreachable.href]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /cannot migrate postgres:\/\/.*no_such_database/);
    assert.ok(!result.stderr.includes("s3cret"));
  },
);
