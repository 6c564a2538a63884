// Opening checks and the migration runner: refuse another application's file, apply the steps a file lacks.
import type { DatabaseSync } from "node:sqlite";
import { SchemaTooNewError } from "../errors.ts";
import { within } from "./connection.ts";
import { MIGRATIONS } from "./migrations.ts";

/** True when the file holds tables but not ours: another application's database. */
export function isForeign(db: DatabaseSync): boolean {
  const row = db.prepare(`SELECT EXISTS (SELECT 1 FROM sqlite_master)
    AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations') AS foreign_file`).get();
  return row?.foreign_file === 1;
}

/** Applies the steps the file lacks; returns their names. */
export function migrate(db: DatabaseSync, nowMs: number): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const version = () => Number((db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as { v: number }).v);
  const seen = version();
  if (seen > MIGRATIONS.length) throw new SchemaTooNewError(seen, MIGRATIONS.length);
  if (seen === MIGRATIONS.length) return [];
  return within(db, "BEGIN IMMEDIATE", () => {
    // Read again under the write lock: another process may have migrated between the look above and now.
    const current = version();
    if (current > MIGRATIONS.length) throw new SchemaTooNewError(current, MIGRATIONS.length);
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    const applied: string[] = [];
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      const step = MIGRATIONS[version - 1]!;
      db.exec(step.sql);
      record.run(version, step.name, Math.floor(nowMs / 1000));
      applied.push(step.name);
    }
    return applied;
  });
}
