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
