// The one module that imports node:sqlite: opens the file, sets pragmas, applies migrations, wraps transactions.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { MIGRATIONS } from "./migrations.ts";

export type Statement = StatementSync;
export type SqlValue = null | number | bigint | string | Uint8Array;
export type Row = Record<string, SqlValue>;

/** A SQLite connection with a statement cache and a transaction helper; table modules receive this. */
export interface Db {
  /** Prepares once per SQL text and reuses the statement afterwards. */
  prepare(sql: string): Statement;
  /** Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back if it throws. `fn` must be synchronous. */
  transaction<T>(fn: () => T): T;
  exec(sql: string): void;
  /** Runs a WAL checkpoint; PASSIVE never blocks readers or writers. */
  checkpoint(mode: "PASSIVE" | "TRUNCATE"): void;
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
}

/** Thrown when the file was migrated by a newer fieldgate than this one. */
export class SchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(`database schema version ${found} is newer than this fieldgate understands (${known}); upgrade fieldgate`);
    this.name = "SchemaTooNewError";
  }
}

/** Opens (creating if needed) and migrates a database; ":memory:" gives a private in-memory one. */
export function openDatabase(path: string, options: OpenOptions = {}): Db {
  const db = new DatabaseSync(path);
  try {
    if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
    // NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash or power loss may
    // lose the last transactions. FULL would cost about 3x token throughput for that last guarantee.
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec(`PRAGMA wal_autocheckpoint = ${Math.max(0, Math.floor(options.autoCheckpointPages ?? 1000))}`);
    migrate(db, options.now ?? Date.now());
  } catch (error) {
    db.close();
    throw error;
  }
  return wrap(db, path);
}

function migrate(db: DatabaseSync, nowMs: number): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const row = db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as { v: number };
  const current = Number(row.v);
  if (current > MIGRATIONS.length) throw new SchemaTooNewError(current, MIGRATIONS.length);
  if (current === MIGRATIONS.length) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      const step = MIGRATIONS[version - 1]!;
      db.exec(step.sql);
      record.run(version, step.name, Math.floor(nowMs / 1000));
    }
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

function wrap(db: DatabaseSync, path: string): Db {
  const cache = new Map<string, Statement>();
  let depth = 0;
  return {
    path,
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
      db.exec("BEGIN IMMEDIATE");
      depth++;
      try {
        const result = fn();
        db.exec("COMMIT");
        return result;
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      } finally {
        depth--;
      }
    },
    exec(sql) {
      db.exec(sql);
    },
    checkpoint(mode) {
      db.exec(`PRAGMA wal_checkpoint(${mode === "TRUNCATE" ? "TRUNCATE" : "PASSIVE"})`);
    },
    close() {
      cache.clear();
      if (db.isOpen) db.close();
    },
  };
}
