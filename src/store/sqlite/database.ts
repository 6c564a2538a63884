// The connection every SQLite table module receives: opens the file, sets pragmas, migrates it, caches statements,
// wraps transactions (group commit in group_commit.ts) and hands checkpoints to checkpoint.ts.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { createGroupCommit } from "./group_commit.ts";
import { ForeignDatabaseError, isStoreBusy, SchemaTooNewError } from "../errors.ts";
import type { CheckpointOutcome, SqlValue } from "../contract.ts";
import { type ArrayRows, BUSY_TIMEOUT_MS, within } from "./connection.ts";
import { isForeign, migrate } from "./migrate.ts";
import {
  CHECKPOINT_SQL,
  type CheckpointMode,
  createCheckpointer,
  outcomeOf,
  takesWriteLock,
} from "./checkpoint.ts";
import type { CheckpointRow } from "./checkpoint_worker.ts";

// Defined in errors.ts, where the PostgreSQL migrations raise them too; re-exported for this module's callers.
export { ForeignDatabaseError, SchemaTooNewError };
export type { CheckpointMode };

export type Statement = StatementSync;
export type Row = Record<string, SqlValue>;

/** A SQLite connection with a statement cache and a transaction helper; table modules receive this. */
export interface Db {
  /** Prepares once per SQL text and reuses the statement afterwards. */
  prepare(sql: string): Statement;
  /**
   * Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back if it throws. `fn` must be synchronous. Every write
   * that reads its rows back with `UPDATE/INSERT … RETURNING` and `.get()` belongs in here: `.get()` stops at the
   * first row and resets the statement, and in autocommit mode SQLite commits in that reset, whose failure
   * (disk full, I/O error) node:sqlite does not report. The row came back, the write was gone. COMMIT throws.
   */
  transaction<T>(fn: () => T): T;
  /**
   * Group commit: runs `fn` in one BEGIN IMMEDIATE … COMMIT shared with the other calls queued in the same
   * event-loop turn, each under its own SAVEPOINT (a throwing `fn` rolls back only its own writes). The promise
   * settles after the shared COMMIT, so a caller answers only once its writes are as durable as with transaction().
   * Every write a request makes goes this way: when another connection holds the write lock, the batch waits for
   * it from a timer (GroupCommit), not in SQLite's busy handler on the event loop.
   */
  transactionBatched<T>(fn: () => T): Promise<T>;
  /**
   * Runs the synchronous reads in `fn` in one read transaction, so they all see the same committed state. Each
   * statement outside a transaction takes its own snapshot, and another process (the CLI's `fields import
   * --replace`, a worker) may commit between two of them. Inside an open transaction `fn` shares its snapshot.
   */
  readTogether<T>(fn: () => T): T;
  exec(sql: string): void;
  /**
   * Names the state of the database as this connection sees it. Two calls return the same stamp only if no other
   * connection (another process, another worker) committed in between, which SQLite's data_version reports, and
   * this connection wrote no row, which total_changes() counts (rolled-back writes included, so it errs towards
   * "changed"). One small read transaction, about 2.5 µs.
   */
  changeStamp(): string;
  /** Runs a WAL checkpoint on this connection (see CheckpointMode). */
  checkpoint(mode: CheckpointMode): CheckpointOutcome;
  /**
   * The same checkpoint on a worker thread with its own connection (Node, file databases), resolving when it is
   * done; elsewhere it runs inline. Copying WAL pages and fsyncing both files would otherwise stall the event loop
   * for milliseconds, which is what the p99 of every write endpoint showed. Rejects after close().
   */
  checkpointInBackground(mode: CheckpointMode): Promise<CheckpointOutcome>;
  /** True inside an open transaction on this connection, whose reads may yet be rolled back. */
  inTransaction(): boolean;
  close(): void;
  readonly path: string;
}

export interface OpenOptions {
  /** Epoch ms, recorded with each applied migration. */
  now?: number;
  /**
   * Pages after which SQLite checkpoints inside a commit (SQLite default 1000). 0 turns automatic
   * checkpoints off so a server can take them off the request path on a timer instead.
   */
  autoCheckpointPages?: number;
  /** Called once the file is at the current version, with the names of the steps this open applied (often none). */
  onMigrated?: (applied: readonly string[]) => void;
}

/** SQLite's "unable to open database file" names neither the file nor the usual cause: both are added. */
function openFile(path: string): DatabaseSync {
  try {
    return new DatabaseSync(path);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open database ${path}: ${message} (does its directory exist and allow writing?)`, { cause: error });
  }
}

/** Opens (creating if needed) and migrates a database; ":memory:" gives a private in-memory one. */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  const db = openFile(path);
  try {
    // First: switching a new file to WAL and migrating it take locks that another process opening the same new
    // file at the same moment may hold (four `users list` on one fresh path failed with "database is locked").
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Before anything changes the file: migrating another application's database would switch it to WAL and add
    // our tables beside its own.
    if (isForeign(db)) throw new ForeignDatabaseError(path);
    if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
    // NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash or power loss may
    // lose the last transactions. FULL would cost about 3x token throughput for that last guarantee.
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    // Deleted and overwritten rows are zeroed, not left in free space: a purged audit row's address, an erased
    // user's name or a replaced field's boundary would otherwise stay readable in the file. The request paths
    // insert and update in place, so only deletes (purge, sign-out, erasure) pay.
    db.exec("PRAGMA secure_delete = ON");
    db.exec(`PRAGMA wal_autocheckpoint = ${Math.max(0, Math.floor(options.autoCheckpointPages ?? 1000))}`);
    const applied = migrate(db, options.now ?? Date.now());
    options.onMigrated?.(applied);
  } catch (error) {
    db.close();
    throw error;
  }
  return wrap(db, path);
}

function wrap(db: DatabaseSync, path: string): Db {
  const cache = new Map<string, Statement>();
  let depth = 0;
  const checkpointer = path === ":memory:" ? undefined : createCheckpointer(path);
  const checkpoint = (mode: CheckpointMode): CheckpointOutcome => {
    let last: Record<string, unknown> | undefined;
    for (const sql of CHECKPOINT_SQL[mode]) last = db.prepare(sql).get();
    return outcomeOf(last);
  };
  // BEGIN IMMEDIATE that gives up at once when another connection holds the write lock: the group commit then
  // retries from a timer, so the event loop (reads included) never stands still in SQLite's busy handler.
  // exec, not a prepared statement: SQLite applies PRAGMA busy_timeout when it compiles the statement, so
  // running a prepared one again changes nothing.
  const connection = {
    exec: (sql: string) => db.exec(sql),
    get isTransaction() {
      return db.isTransaction;
    },
    beginImmediate(): boolean {
      db.exec("PRAGMA busy_timeout = 0");
      try {
        db.exec("BEGIN IMMEDIATE");
        return true;
      } catch (error) {
        if (isStoreBusy(error)) return false;
        throw error;
      } finally {
        db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    },
  };
  const batch = createGroupCommit(connection, (fn) => {
    depth++;
    try {
      fn();
    } finally {
      depth--;
    }
  }, (fn) => void setImmediate(fn));
  // Two statements rather than one SELECT over pragma_data_version: that table-valued function prepares a PRAGMA
  // statement again on every call (2.5 against 4.4 µs per stamp). Rows as arrays skip building an object.
  const dataVersion = db.prepare("PRAGMA data_version");
  const totalChanges = db.prepare("SELECT total_changes()");
  for (const statement of [dataVersion, totalChanges]) (statement as ArrayRows).setReturnArrays(true);
  return {
    path,
    changeStamp() {
      const version = (dataVersion.get() as unknown as [number])[0];
      const changes = (totalChanges.get() as unknown as [number])[0];
      return `${version}:${changes}`;
    },
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    transaction(fn) {
      // Nested calls join the outer transaction: store operations compose without knowing who called them.
      if (depth > 0) return fn();
      depth++;
      try {
        return within(db, "BEGIN IMMEDIATE", fn);
      } finally {
        depth--;
      }
    },
    transactionBatched: batch.run,
    readTogether(fn) {
      if (db.isTransaction) return fn();
      // A deferred BEGIN takes no lock; the first read fixes the snapshot the others share, and writers in other
      // connections go on meanwhile (WAL).
      return within(db, "BEGIN", fn);
    },
    exec(sql) {
      db.exec(sql);
    },
    checkpoint,
    async checkpointInBackground(mode) {
      if (checkpointer?.available()) {
        // One statement at a time: while one that takes the write lock runs, this connection's batched writes wait
        // for it off the event loop instead of in SQLite's busy handler on it (GroupCommit.holdWhile).
        let row: CheckpointRow;
        for (const sql of CHECKPOINT_SQL[mode]) {
          const step = () => checkpointer.run([sql]);
          row = takesWriteLock(sql) ? await batch.holdWhile(step, BUSY_TIMEOUT_MS) : await step();
        }
        return outcomeOf(row);
      }
      if (!db.isOpen) throw new Error("checkpoint after close");
      // Inline, nothing else writes through this connection meanwhile, so a passive checkpoint copies every frame
      // it may and the next write starts the WAL over; RESTART would only add waiting, on the event loop, for other
      // connections' readers.
      return checkpoint(mode === "RESTART" ? "PASSIVE" : mode);
    },
    inTransaction: () => db.isTransaction,
    close() {
      batch.drain();
      checkpointer?.close();
      cache.clear();
      if (db.isOpen) db.close();
    },
  };
}

