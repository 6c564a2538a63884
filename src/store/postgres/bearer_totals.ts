// Saves a bearer `{ fields { total_count } }` its count's round trip on PostgreSQL (2 round trips to 1 per request,
// counted by PgClient.stats()): the bearer check reads the total in its own statement, and fields.count answers
// from it when asked for exactly that check's organizations, unfiltered.
import type { FieldFilter } from "../fields.ts";

/**
 * A column for the bearer check (over `tokens t`): the total of field_counts over the acting user's organizations,
 * read in the same statement, so in the same snapshot, as the organization ids themselves.
 */
export const FIELD_TOTAL_COLUMN = `(SELECT COALESCE(SUM(fc.n), 0)::bigint FROM memberships m
    JOIN field_counts fc ON fc.organization_id = m.organization_id WHERE m.user_id = t.user_id) AS field_total`;

/** The totals the bearer checks of one store instance read, each tied to the organization-id array it handed out. */
export interface BearerTotals {
  /** Ties `total` to `organizationIds`, the frozen array one bearer check returned. */
  remember(organizationIds: readonly number[], total: number): void;
  /**
   * The total of an unfiltered count whose organizationIds is such an array itself. A copy, another list or any
   * other filter property gets undefined and is counted afresh: only the holder of one check's result (the request
   * that made it) is answered from that check's snapshot, never a later request.
   */
  answer(filter: FieldFilter): number | undefined;
}

export function createBearerTotals(): BearerTotals {
  // Keyed weakly by the array: an entry lives as long as the request holding the check's result, and no longer.
  const totals = new WeakMap<readonly number[], number>();
  return {
    remember(organizationIds, total) {
      totals.set(organizationIds, total);
    },
    answer(filter) {
      // Any property but the organizations (crop, season, or one added later) narrows the count.
      for (const [key, value] of Object.entries(filter)) {
        if (key !== "organizationIds" && value !== undefined) return undefined;
      }
      return totals.get(filter.organizationIds);
    },
  };
}
