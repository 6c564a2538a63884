// Errors the store raises for conditions callers are expected to handle.

/** A uniqueness rule was violated (username, client id, organization slug). */
export class StoreConflictError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreConflictError";
  }
}

/** SQLSTATE of a PostgreSQL error (postgres.js puts it in `code`), or undefined. */
function sqlState(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** True for a uniqueness violation: SQLite's UNIQUE constraint failure or PostgreSQL's 23505. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (/UNIQUE constraint failed/.test(error.message) || sqlState(error) === "23505");
}

/** Maps a uniqueness violation (either backend) to StoreConflictError; rethrows anything else untouched. */
export function rethrowConflict(error: unknown, message: string): never {
  if (isUniqueViolation(error)) {
    throw new StoreConflictError(message, { cause: error });
  }
  throw error;
}

/** The database was migrated by a newer fieldgate than this one (SQLite file or PostgreSQL database alike). */
export class SchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(`database schema version ${found} is newer than this fieldgate understands (${known}); upgrade fieldgate`);
    this.name = "SchemaTooNewError";
  }
}

/**
 * The database holds another application's tables and no schema_migrations: a mistyped path or URL, or the wrong
 * database. `where` names it without a password.
 */
export class ForeignDatabaseError extends Error {
  constructor(where: string) {
    super(`${where} is not a fieldgate database (it has tables of its own and no schema_migrations); check --db or FIELDGATE_DB`);
    this.name = "ForeignDatabaseError";
  }
}

/** Another connection kept SQLite's write lock for longer than a write may wait (the busy timeout). */
export class StoreBusyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreBusyError";
  }
}

/**
 * True for StoreBusyError and for SQLite's own SQLITE_BUSY ("database is locked", extended codes included),
 * which a write outside the group commit raises after waiting the busy timeout in SQLite's handler.
 */
export function isStoreBusy(error: unknown): boolean {
  if (error instanceof StoreBusyError) return true;
  if (!(error instanceof Error)) return false;
  if (PG_BUSY.has(sqlState(error) ?? "")) return true;
  return primaryCode(error) === SQLITE_BUSY || /database is locked/.test(error.message);
}

/** SQLite's primary result code (the low byte of the extended one node:sqlite reports as `errcode`). */
function primaryCode(error: unknown): number | undefined {
  const code = error instanceof Error ? (error as { errcode?: unknown }).errcode : undefined;
  return typeof code === "number" ? code & 0xff : undefined;
}

const SQLITE_BUSY = 5;

/** SQLite primary result codes that mean the database file cannot be written (or read) now, whoever asks. */
const STORAGE_FAULTS = new Map<number, string>([
  [8, "read-only"], // SQLITE_READONLY: the file or its directory is not writable
  [10, "I/O error"], // SQLITE_IOERR
  [11, "corrupt"], // SQLITE_CORRUPT
  [13, "full"], // SQLITE_FULL: the disk (or max_page_count) is full
  [26, "not a database"], // SQLITE_NOTADB
]);

/**
 * What is wrong with the storage when `error` is one of SQLite's storage faults, else undefined: a condition for
 * the operator, not a bug, and every request that writes meets it until it is fixed.
 */
export function storageFaultOf(error: unknown): string | undefined {
  const code = primaryCode(error);
  if (code !== undefined) return STORAGE_FAULTS.get(code);
  const state = sqlState(error);
  if (state !== undefined) return PG_FAULTS.get(state) ?? (state.startsWith("08") ? "unreachable" : undefined);
  // postgres.js's own codes for a server it cannot reach or that went away (a restart, a failover).
  const code2 = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code2 === "string" && PG_CLIENT_FAULTS.has(code2) ? "unreachable" : undefined;
}

/**
 * PostgreSQL conditions that pass with time and are answered 503 like SQLite's busy: a lock or statement timeout
 * (55P03, 57014), a conflict whose retries were spent (40001, 40P01), every connection slot taken (53300), a
 * server starting or shutting down (57P03, 57P01).
 */
const PG_BUSY = new Set(["55P03", "57014", "40001", "40P01", "57P01", "57P03"]);

/**
 * True when the PostgreSQL server has no connection slot left for this role (53300, "remaining connection slots are
 * reserved"): a capacity condition for the operator (pool size × instances against max_connections), told apart
 * from a busy lock.
 */
export function isConnectionsExhausted(error: unknown): boolean {
  return sqlState(error) === "53300";
}

/** PostgreSQL conditions for the operator: disk full, out of memory, a read-only (standby) server. */
const PG_FAULTS = new Map<string, string>([
  ["53100", "full"],
  ["53200", "out of memory"],
  ["25006", "read-only"],
]);

/** postgres.js's codes when it cannot reach the server or the server closed the connection. */
const PG_CLIENT_FAULTS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EPIPE",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
]);

/**
 * True for node:sqlite's refusal to use a closed database ("database is not open", "statement has been finalized"):
 * requests still in flight when an embedder closed the store, which App.close() avoids by waiting for them.
 */
export function isStoreClosed(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // postgres.js after sql.end(): CONNECTION_ENDED.
  if (code === "CONNECTION_ENDED") return true;
  return code === "ERR_INVALID_STATE" && /database is not open|statement has been finalized/.test(error.message);
}
