// copySqliteToPostgres: batches bounded by rows and bytes, and a refusal of a schema it does not know.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openPostgres, type PgClient } from "../../../src/store/postgres/connect.ts";
import { copySqliteToPostgres } from "../../../src/store/postgres/copy.ts";
import { migratePostgres } from "../../../src/store/postgres/migrations.ts";
import { openSnapshot } from "../../../src/store/sqlite/snapshot.ts";
import { openStore } from "../../../src/store/sqlite/store.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { tempDb } from "../../helpers/temp_db.ts";

/** A migrated SQLite file filled by `fill` through a plain connection. */
function sqliteFile(fill: (db: DatabaseSync) => void): { path: string; cleanup: () => void } {
  const file = tempDb("fieldgate-copy-");
  void openStore(file.path).close();
  const db = new DatabaseSync(file.path);
  try {
    db.exec("BEGIN");
    fill(db);
    db.exec("COMMIT");
  } finally {
    db.close();
  }
  return file;
}

async function withTarget<T>(url: string, fn: (pg: PgClient) => Promise<T>): Promise<T> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    await migratePostgres(pg);
    return await fn(pg);
  } finally {
    await pg.close();
  }
}

postgresTest("copySqliteToPostgres copies tables that take several INSERTs, by row count and by bytes", async ({ url }) => {
  // 1 234 audit rows need three 500-row statements; twelve 1 MB boundaries pass the 4 MB byte bound three times over.
  const boundary = JSON.stringify({ type: "Polygon", coordinates: [[[5, 52], [5.1, 52], [5.1, 52.1], [5, 52]]], pad: "x".repeat(1_048_576) });
  const file = sqliteFile((db) => {
    const audit = db.prepare("INSERT INTO audit_events (at, event, detail) VALUES (?, 'bulk', ?)");
    for (let i = 0; i < 1_234; i++) audit.run(i, JSON.stringify({ i }));
    db.prepare("INSERT INTO organizations (id, slug, name, created_at) VALUES (7, 'acme', 'Acme', 0)").run();
    const field = db.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
      centroid_lat, created_at, updated_at) VALUES (7, ?, 1.5, ?, '2026', ?, 5.05, 52.05, 0, 0)`);
    for (let i = 0; i < 12; i++) field.run(`Field ${i}`, i % 2 ? "wheat" : null, boundary);
  });
  const source = openSnapshot(file.path);
  try {
    const outcome = await withTarget(url, async (pg) => {
      const result = await copySqliteToPostgres(source, pg);
      const [audit] = await pg.query("SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi, COUNT(DISTINCT detail) AS d FROM audit_events");
      assert.deepEqual(audit, { n: 1_234, lo: 1, hi: 1_234, d: 1_234 });
      const [fields] = await pg.query("SELECT COUNT(*) AS n, SUM(length(boundary)) AS bytes FROM fields WHERE boundary = $1", [boundary]);
      assert.deepEqual(fields, { n: 12, bytes: 12 * boundary.length });
      const counts = await pg.query("SELECT crop, crop_null, n FROM field_counts ORDER BY crop_null");
      assert.deepEqual(counts, [{ crop: "wheat", crop_null: 0, n: 6 }, { crop: "", crop_null: 1, n: 6 }]);
      return result;
    });
    assert.ok(outcome.copied);
    assert.equal(outcome.rows.audit_events, 1_234);
    assert.equal(outcome.rows.fields, 12);
    assert.equal(outcome.rows.field_counts, 2);
  } finally {
    source.close();
    file.cleanup();
  }
});

postgresTest("copySqliteToPostgres refuses a target with a table it does not know, and writes nothing", async ({ url }) => {
  const file = sqliteFile((db) => void db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('acme', 'Acme', 0)").run());
  const source = openSnapshot(file.path);
  try {
    await withTarget(url, async (pg) => {
      await pg.exec("CREATE TABLE webhooks (id bigint PRIMARY KEY)");
      await assert.rejects(copySqliteToPostgres(source, pg), /does not match what copy-store copies \(unknown tables: webhooks; missing: none\)/);
      assert.deepEqual(await pg.query("SELECT COUNT(*) AS n FROM organizations"), [{ n: 0 }]);
    });
  } finally {
    source.close();
    file.cleanup();
  }
});
