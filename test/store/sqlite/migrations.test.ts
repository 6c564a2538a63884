import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Worker } from "node:worker_threads";
import { MIGRATIONS } from "../../../src/store/sqlite/migrations.ts";
import { ForeignDatabaseError, SchemaTooNewError } from "../../../src/store/errors.ts";
import { openDatabase } from "../../../src/store/sqlite/database.ts";

test("opening a new database applies every migration once and records it", () => {
  const db = openDatabase(":memory:", { now: 1_700_000_000_000 });
  const rows = db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all();
  assert.deepEqual(rows.map((r) => ({ ...r })), MIGRATIONS.map((m, i) => ({ version: i + 1, name: m.name, applied_at: 1_700_000_000 })));
  db.close();
});

test("reopening a migrated file applies nothing again and keeps the data", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "m.db");
  try {
    const first = openDatabase(path);
    first.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'ACME', 1)").run();
    first.close();
    const second = openDatabase(path);
    assert.equal(second.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get()?.n, MIGRATIONS.length);
    assert.equal(second.prepare("SELECT name FROM organizations").get()?.name, "ACME");
    second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a database migrated by a newer fieldgate is refused with a clear message", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "new.db");
  try {
    openDatabase(path).close();
    const raw = new DatabaseSync(path);
    raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)").run(MIGRATIONS.length + 1);
    raw.close();
    assert.throws(() => openDatabase(path), (error: unknown) => error instanceof SchemaTooNewError && /newer than this fieldgate/.test(error.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("another application's SQLite file is refused and left exactly as it was", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "notes.db");
  try {
    const raw = new DatabaseSync(path);
    raw.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
    raw.close();
    assert.throws(() => openDatabase(path), (error: unknown) =>
      error instanceof ForeignDatabaseError && error.message.includes(`${path} is not a fieldgate database`));
    const after = new DatabaseSync(path);
    try {
      assert.deepEqual(after.prepare("SELECT name FROM sqlite_master").all().map((r) => r.name), ["notes"]);
      assert.equal(after.prepare("PRAGMA journal_mode").get()?.journal_mode, "delete", "not switched to WAL");
    } finally {
      after.close();
    }
    // An empty file (a fresh path, or one created by touch) is a new database.
    const empty = join(dir, "empty.db");
    new DatabaseSync(empty).close();
    openDatabase(empty).close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("foreign keys are enforced", () => {
  const db = openDatabase(":memory:");
  assert.throws(() => db.prepare("INSERT INTO memberships (user_id, organization_id, created_at) VALUES (99, 99, 0)").run(), /FOREIGN KEY/);
  db.close();
});

test("a transaction that throws leaves nothing behind", () => {
  const db = openDatabase(":memory:");
  assert.throws(() =>
    db.transaction(() => {
      db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('a', 'A', 1)").run();
      throw new Error("boom");
    }), /boom/);
  assert.equal(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()?.n, 0);
  db.close();
});

test("the field counts step backfills counts for fields stored before it", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "m.db");
  try {
    const raw = new DatabaseSync(path);
    raw.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    raw.exec(MIGRATIONS[0]!.sql);
    raw.exec("INSERT INTO schema_migrations VALUES (1, 'initial schema', 0)");
    raw.exec("INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'ACME', 1)");
    const insert = raw.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
      centroid_lat, created_at, updated_at) VALUES (1, 'f', 1, ?, ?, '{}', 0, 0, 1, 1)`);
    const rows: [string | null, string | null][] = [["wheat", "2026"], ["wheat", "2026"], [null, "2026"], ["maize", null]];
    for (const [crop, season] of rows) insert.run(crop, season);
    raw.close();
    const db = openDatabase(path);
    const counts = db.prepare("SELECT crop_null, crop, season_null, season, n FROM field_counts ORDER BY crop, crop_null").all();
    assert.deepEqual(counts.map((r) => ({ ...r })), [
      { crop_null: 1, crop: "", season_null: 0, season: "2026", n: 1 },
      { crop_null: 0, crop: "maize", season_null: 1, season: "", n: 1 },
      { crop_null: 0, crop: "wheat", season_null: 0, season: "2026", n: 2 },
    ]);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("connections opening one new file at the same moment all succeed: one migrates, the others wait and see it", async () => {
  for (let round = 0; round < 6; round++) {
    const dir = mkdtempSync(join(tmpdir(), "fieldgate-open-race-"));
    const path = join(dir, "race.db");
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => new Promise<string>((resolve, reject) => {
      const worker = new Worker(new URL("./open_worker.ts", import.meta.url), { workerData: { path } });
      worker.once("message", (message) => {
        resolve(String(message));
        void worker.terminate();
      });
      worker.once("error", reject);
    })));
    assert.deepEqual(outcomes, Array(6).fill("ok"), `round ${round}`);
    const db = new DatabaseSync(path);
    assert.equal((db.prepare("SELECT COUNT(*) AS n FROM schema_migrations").get() as { n: number }).n, MIGRATIONS.length);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A database file migrated by hand up to (not including) the named step, as an older fieldgate left it. */
function databaseBefore(path: string, step: string): DatabaseSync {
  const upTo = MIGRATIONS.findIndex((m) => m.name === step);
  assert.ok(upTo > 0, `no migration "${step}"`);
  const raw = new DatabaseSync(path);
  raw.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  MIGRATIONS.slice(0, upTo).forEach((m, i) => {
    raw.exec(m.sql);
    raw.prepare("INSERT INTO schema_migrations VALUES (?, ?, 0)").run(i + 1, m.name);
  });
  return raw;
}

/** The SQL of the indexes and triggers on fields, which the rebuild must recreate unchanged. */
function fieldsSchema(db: DatabaseSync): unknown[] {
  return db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'fields' AND type IN ('index', 'trigger') ORDER BY name")
    .all().map((r) => ({ ...r }));
}

test("the field ids step keeps every field, its id, indexes, triggers and counts, and ids are not reused after it", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "m.db");
  try {
    const raw = databaseBefore(path, "field ids never reused");
    raw.exec("INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'ACME', 1), ('beta', 'Beta', 1)");
    const insert = raw.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
      centroid_lat, created_at, updated_at) VALUES (?, ?, 1.5, ?, ?, '{}', 5, 52, 1, 2)`);
    const rows: [number, string, string | null, string | null][] = [
      [1, "a", "wheat", "2026"], [2, "b", "wheat", "2026"], [1, "c", null, "2026"], [1, "d", "maize", null], [2, "e", "maize", "2025"],
    ];
    for (const row of rows) insert.run(...row);
    raw.exec("DELETE FROM fields WHERE name = 'c'");
    const before = { fields: raw.prepare("SELECT * FROM fields ORDER BY id").all() };
    raw.close();

    openDatabase(path).close();
    const db = new DatabaseSync(path);
    assert.deepEqual(db.prepare("SELECT * FROM fields ORDER BY id").all(), before.fields);
    // The same indexes and triggers as a database created new today (later steps replace some triggers).
    const freshPath = join(dir, "fresh.db");
    openDatabase(freshPath).close();
    const today = new DatabaseSync(freshPath);
    assert.deepEqual(fieldsSchema(db), fieldsSchema(today));
    today.close();
    assert.match(String(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'fields'").get()?.sql), /id INTEGER PRIMARY KEY AUTOINCREMENT/);
    const counts = () => db.prepare("SELECT organization_id, crop_null, crop, season_null, season, n FROM field_counts WHERE n > 0 ORDER BY 1, 2, 3, 4, 5")
      .all().map((r) => ({ ...r }));
    const scan = () => db.prepare(`SELECT organization_id, crop IS NULL AS crop_null, IFNULL(crop, '') AS crop, season IS NULL AS season_null,
      IFNULL(season, '') AS season, COUNT(*) AS n FROM fields GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`).all().map((r) => ({ ...r }));
    assert.deepEqual(counts(), scan(), "after the rebuild");
    // The triggers work on the new table: delete the top row, insert, and the counts follow.
    db.prepare("DELETE FROM fields WHERE name = 'e'").run();
    const fresh = db.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
      centroid_lat, created_at, updated_at) VALUES (1, 'f', 1, 'oats', NULL, '{}', 5, 52, 3, 3) RETURNING id`).get();
    assert.ok(Number(fresh?.id) > 5, `new id ${fresh?.id} reuses a deleted one`);
    db.prepare("UPDATE fields SET crop = 'rye' WHERE name = 'a'").run();
    assert.deepEqual(counts(), scan(), "after a delete, an insert and an update");
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the empty field counts step drops the rows already at 0, and later deletes and updates leave none", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "m.db");
  try {
    const raw = databaseBefore(path, "field counts drop empty rows");
    raw.exec("INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'ACME', 1)");
    const insert = raw.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
      centroid_lat, created_at, updated_at) VALUES (1, ?, 1, ?, '2026', '{}', 5, 52, 1, 1)`);
    for (const [name, crop] of [["a", "hemp"], ["b", "wheat"], ["c", "maize"]] as const) insert.run(name, crop);
    raw.exec("DELETE FROM fields WHERE name = 'a'");
    const crops = (db: DatabaseSync) => db.prepare("SELECT crop, n FROM field_counts ORDER BY crop").all().map((r) => ({ ...r }));
    assert.deepEqual(crops(raw), [{ crop: "hemp", n: 0 }, { crop: "maize", n: 1 }, { crop: "wheat", n: 1 }], "the premise");
    raw.close();

    openDatabase(path).close();
    const db = new DatabaseSync(path);
    assert.deepEqual(crops(db), [{ crop: "maize", n: 1 }, { crop: "wheat", n: 1 }]);
    db.exec("DELETE FROM fields WHERE name = 'b'");
    db.exec("UPDATE fields SET crop = 'oats' WHERE name = 'c'");
    assert.deepEqual(crops(db), [{ crop: "oats", n: 1 }]);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("opening reports the steps it applied through onMigrated: all on a new file, none on the next open", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-migrations-"));
  const path = join(dir, "reported.db");
  try {
    const reports: (readonly string[])[] = [];
    openDatabase(path, { onMigrated: (applied) => reports.push(applied) }).close();
    openDatabase(path, { onMigrated: (applied) => reports.push(applied) }).close();
    assert.deepEqual(reports, [MIGRATIONS.map((m) => m.name), []]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
