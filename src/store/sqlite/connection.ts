// Helpers every module that holds a node:sqlite connection shares: the busy timeout, transactions that roll back
// without hiding the cause, and statements that return rows as arrays.
import type { DatabaseSync, StatementSync } from "node:sqlite";

/** How long a connection waits for another's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/**
 * StatementSync.setReturnArrays (Node 24, Deno 2.4+), spelled out: the node:sqlite types a Deno project resolves
 * (its own @types/node) may predate it, and an embedder's `deno check` would fail on this file.
 */
export type ArrayRows = StatementSync & { setReturnArrays(enabled: boolean): void };

/** Runs `fn` between `begin` (BEGIN or BEGIN IMMEDIATE) and COMMIT; rolls back when `fn` or the COMMIT throws. */
export function within<T>(db: DatabaseSync, begin: string, fn: () => T): T {
  db.exec(begin);
  try {
    const result = fn();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    rollbackIfOpen(db);
    throw error;
  }
}

/**
 * After a failed statement or COMMIT SQLite may already have rolled the transaction back (disk full, I/O errors):
 * a ROLLBACK then fails with "no transaction is active", and that message would replace the real cause.
 */
export function rollbackIfOpen(db: DatabaseSync): void {
  if (db.isTransaction) db.exec("ROLLBACK");
}
