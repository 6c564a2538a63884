// The Doorkeeper import's contract, shared by both backends: what it is given, what it answers, and the small set of
// queries each backend runs inside the import's one transaction (the decisions over them are in import_decisions.ts).
import type { ImportResult, ImportStore, ImportTransaction } from "./contract.ts";
import { applyImportRows } from "./import_decisions.ts";

/**
 * Grant families made by an import start with this: only they may hold two live refresh tokens at once (a
 * Doorkeeper pair rotated but not yet settled), which rotation then retires together (token_rotation.ts).
 */
export const IMPORTED_FAMILY_PREFIX = "dk_";

/** True for a grant family an import created. */
export function isImportedFamily(familyId: string | null): boolean {
  return familyId !== null && familyId.startsWith(IMPORTED_FAMILY_PREFIX);
}

/** Thrown inside the transaction of a dry run to roll it back, carrying what it found. */
class DryRunDone {
  readonly result: ImportResult;
  constructor(result: ImportResult) {
    this.result = result;
  }
}

/** The import store over a backend's transaction: the decisions run once, the same on every backend. */
export function importStoreOver(transact: ImportTransaction): ImportStore {
  return {
    async apply(input) {
      try {
        // A backend that retries the transaction (a PostgreSQL deadlock) runs everything again from a fresh result.
        return await transact(async (q) => {
          const result = await applyImportRows(q, input);
          if (input.dryRun) throw new DryRunDone(result);
          await q.insertAudit(input.audit(result));
          return result;
        });
      } catch (error) {
        if (error instanceof DryRunDone) return error.result;
        throw error;
      }
    },
  };
}
