// Errors the store raises for conditions callers are expected to handle.

/** A uniqueness rule was violated (username, client id, organization slug). */
export class StoreConflictError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreConflictError";
  }
}

/** Maps SQLite's UNIQUE constraint failure to StoreConflictError; rethrows anything else untouched. */
export function rethrowConflict(error: unknown, message: string): never {
  if (error instanceof Error && /UNIQUE constraint failed/.test(error.message)) {
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
  return code === undefined ? undefined : STORAGE_FAULTS.get(code);
}

/**
 * True for node:sqlite's refusal to use a closed database ("database is not open", "statement has been finalized"):
 * requests still in flight when an embedder closed the store, which App.close() avoids by waiting for them.
 */
export function isStoreClosed(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === "ERR_INVALID_STATE" &&
    /database is not open|statement has been finalized/.test(error.message);
}
