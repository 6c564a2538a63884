// The module that opens node:sqlite: sets pragmas, applies migrations, wraps transactions, runs checkpoints.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { Worker } from "node:worker_threads";
import { createGroupCommit } from "./group_commit.ts";
import { ForeignDatabaseError, isStoreBusy, SchemaTooNewError } from "../errors.ts";
import { MIGRATIONS } from "./migrations.ts";
import type { CheckpointOutcome } from "../contract.ts";

// Defined in errors.ts, where the PostgreSQL migrations raise them too; re-exported for this module's callers.
export { ForeignDatabaseError, SchemaTooNewError };

export type Statement = StatementSync;
export type SqlValue = null | number | bigint | string | Uint8Array;
export type Row = Record<string, SqlValue>;
/** A result row of either backend (a Row here, a PgRow on PostgreSQL), as the row mappers they share read it. */
export type MappedRow = Readonly<Record<string, unknown>>;

/**
 * PASSIVE copies WAL frames into the database without ever blocking readers or writers. RESTART also starts the
 * WAL over, so a busy server's WAL stays about one checkpoint interval of writes long. TRUNCATE empties the file.
 */
export type CheckpointMode = "PASSIVE" | "RESTART" | "TRUNCATE";

/**
 * The statements of each mode. Only a checkpoint that has copied every frame lets the next writer start the WAL
 * over, and under a steady write load a PASSIVE one never has: frames keep arriving while it copies, so the WAL
 * grew by every write until the load stopped (500 MB in 8 s of token issuance, and each lookup in it got slower).
 * SQLite's RESTART holds the write lock for its whole run (30-60 ms under that load, mostly syncing the WAL), so
 * RESTART here first copies the bulk passively, writers still running, and then restarts, holding the lock only
 * for the frames that arrived meanwhile (4-7 ms). The checkpoint thread's connection never waits long for anyone
 * (CHECKPOINT_BUSY_MS), so a reader that keeps the WAL in use makes RESTART give up and report it, not stall writers.
 */
const CHECKPOINT_SQL: Record<CheckpointMode, readonly string[]> = {
  PASSIVE: ["PRAGMA wal_checkpoint(PASSIVE)"],
  RESTART: ["PRAGMA wal_checkpoint(PASSIVE)", "PRAGMA wal_checkpoint(RESTART)"],
  TRUNCATE: ["PRAGMA wal_checkpoint(TRUNCATE)"],
};

/**
 * How long the checkpoint thread's RESTART may wait for the write lock or for readers to leave the WAL. While it
 * waits it holds the write lock. This process's batched writes wait for it off the event loop (GroupCommit
 * holdWhile), but other writers (Db.transaction, another process) wait in SQLite's busy handler: with the usual 5 s
 * busy timeout, one sqlite3 shell with an open transaction stopped the server for 5 s every second. A commit holds
 * the lock well under a millisecond, but on two busy cores a writer can be descheduled while holding it (10 ms
 * was missed now and then in CI), so 25 ms; past that RESTART gives up (busy) and the next second tries again.
 */
const CHECKPOINT_BUSY_MS = 25;

/** How long this connection waits for another's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** PASSIVE copies beside writers; the other modes take the write lock for their run. */
const takesWriteLock = (sql: string): boolean => !sql.includes("(PASSIVE)");

/** Reads the row PRAGMA wal_checkpoint answers: busy is 1 when it gave up; log frames in the WAL, checkpointed copied. */
function outcomeOf(row: Record<string, unknown> | undefined): CheckpointOutcome {
  return { complete: Number(row?.busy) === 0 && Number(row?.log) === Number(row?.checkpointed) };
}

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

/**
 * StatementSync.setReturnArrays (Node 24, Deno 2.4+), spelled out: the node:sqlite types a Deno project resolves
 * (its own @types/node) may predate it, and an embedder's `deno check` would fail on this file.
 */
type ArrayRows = StatementSync & { setReturnArrays(enabled: boolean): void };

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

/**
 * An existing SQLite file opened read-only and not migrated, every read in one snapshot (a deferred BEGIN): for
 * copying a whole installation elsewhere while it stays exactly as it was.
 */
export interface SqliteSnapshot {
  /** Every row of a query, as objects. */
  all(sql: string): Row[];
  /** The rows of a query one at a time, each as its values in column order: a large table never sits in memory whole. */
  iterate(sql: string): IterableIterator<SqlValue[]>;
  /** Ends the snapshot and closes the file. */
  close(): void;
}

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
    all: (sql) => db.prepare(sql).all() as Row[],
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

function isForeign(db: DatabaseSync): boolean {
  const row = db.prepare(`SELECT EXISTS (SELECT 1 FROM sqlite_master)
    AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations') AS foreign_file`).get();
  return row?.foreign_file === 1;
}

/** Applies the steps the file lacks; returns their names. */
function migrate(db: DatabaseSync, nowMs: number): string[] {
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

/** Runs `fn` between `begin` (BEGIN or BEGIN IMMEDIATE) and COMMIT; rolls back when `fn` or the COMMIT throws. */
function within<T>(db: DatabaseSync, begin: string, fn: () => T): T {
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
function rollbackIfOpen(db: DatabaseSync): void {
  if (db.isTransaction) db.exec("ROLLBACK");
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

// The checkpoint worker: plain CommonJS evaluated in a worker thread, so no extra file has to import node:sqlite.
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(workerData.path);
db.exec("PRAGMA busy_timeout = " + workerData.busyMs);
db.exec("PRAGMA synchronous = NORMAL");
parentPort.on("message", (message) => {
  if (message.close) {
    db.close();
    parentPort.close();
    return;
  }
  try {
    let row;
    for (const sql of message.statements) row = db.prepare(sql).get();
    parentPort.postMessage({ id: message.id, row });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message || error) });
  }
});
`;

type CheckpointRow = Record<string, unknown> | undefined;

interface Pending {
  resolve: (row: CheckpointRow) => void;
  reject: (error: Error) => void;
}

/**
 * A lazily started checkpoint thread for the file at `path`, on Node only. Deno 2.9 runs the same worker, but there
 * it cost more than it saved: alternated `npm run bench -- --runtime deno --only token,refresh` runs
 * gave 7.0k and 7.4k tokens/s with p99 4.2-4.7 ms on the thread against 9.2k and 10.2k with p99 2.4-2.5 ms inline.
 */
function createCheckpointer(path: string) {
  const enabled = !("Deno" in globalThis);
  let worker: Worker | undefined;
  let closed = false;
  let nextId = 0;
  const pending = new Map<number, Pending>();
  const fail = (error: Error) => {
    // A crashed worker fails what it had in hand; the next checkpoint starts a fresh one.
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    const w = new Worker(CHECKPOINT_WORKER, { eval: true, workerData: { path, busyMs: CHECKPOINT_BUSY_MS } });
    w.unref();
    w.on("message", (message: { id: number; row?: CheckpointRow; error?: string }) => {
      const p = pending.get(message.id);
      pending.delete(message.id);
      if (message.error === undefined) p?.resolve(message.row);
      else p?.reject(new Error(`checkpoint failed: ${message.error}`));
    });
    w.on("error", fail);
    w.on("exit", () => {
      if (worker === w) fail(new Error("checkpoint worker exited"));
    });
    return w;
  };
  return {
    available: () => enabled,
    /** Runs the statements on the thread; resolves with the last one's row. */
    run(statements: readonly string[]): Promise<CheckpointRow> {
      // After close() a late timer must not start a thread on a file the process has let go of.
      if (closed) return Promise.reject(new Error("checkpoint after close"));
      worker ??= start();
      const id = nextId++;
      return new Promise<CheckpointRow>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker!.postMessage({ id, statements });
      });
    },
    close(): void {
      closed = true;
      const w = worker;
      worker = undefined;
      w?.postMessage({ close: true });
    },
  };
}
