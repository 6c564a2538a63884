// Read-only snapshots of an existing SQLite file, for copying a whole installation elsewhere (cli copy-store).
import { DatabaseSync } from "node:sqlite";
import type { SqliteSnapshot, SqlValue } from "../contract.ts";
import { type ArrayRows, BUSY_TIMEOUT_MS, rollbackIfOpen } from "./connection.ts";

/** Opens the SQLite file at `path` read-only, without migrating it; see SqliteSnapshot. */
export function openSnapshot(path: string): SqliteSnapshot {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open database ${path}: ${message}`, { cause: error });
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec("BEGIN");
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    all: (sql) => db.prepare(sql).all() as Record<string, SqlValue>[],
    iterate(sql) {
      const statement = db.prepare(sql) as ArrayRows;
      statement.setReturnArrays(true);
      return statement.iterate() as IterableIterator<SqlValue[]>;
    },
    close() {
      if (!db.isOpen) return;
      rollbackIfOpen(db);
      db.close();
    },
  };
}
