// Saves a bearer `{ fields { total_count } }` its count's round trip on PostgreSQL (2 round trips to 1 per request,
// counted by PgClient.stats(); −20–30 % database CPU per request): the bearer check reads the total in its own
// statement and hands it on inside the organization ids it returns (OrganizationIds.fieldTotal), and fields.count
// answers an unfiltered count over those very ids from it.
import type { FieldFilter, OrganizationIds } from "../contract.ts";

/**
 * A column for the bearer check (over `tokens t`): the acting user's organizations, each as `[id, its field count]`
 * in a JSON array, unordered, read in the same statement, so in the same snapshot, as the token. One sublink for the
 * ids and the total: a second one summing field_counts cost the bearer check 7 % more instructions
 * (bench/pg_instructions.ts).
 */
export const ORGANIZATIONS_COLUMN = `array_to_json(ARRAY(SELECT ARRAY[m.organization_id, COALESCE(fc.n, 0)]
    FROM memberships m LEFT JOIN field_counts fc ON fc.organization_id = m.organization_id
    WHERE m.user_id = t.user_id)) AS organizations`;

/** ORGANIZATIONS_COLUMN's value as the ids, ascending, carrying their field total. */
export function organizationsOf(value: unknown): OrganizationIds {
  const pairs = value as [number, number][];
  const ids = pairs.map(([id]) => Number(id)).sort((a, b) => a - b);
  return idsWithTotal(ids, pairs.reduce((total, [, fields]) => total + Number(fields), 0));
}

/** The bearer check's organization ids (frozen), carrying the field total read with them. */
export function idsWithTotal(ids: number[], fieldTotal: number): OrganizationIds {
  // Not enumerable: the ids still compare, print and serialise as the plain array they are.
  return Object.freeze(Object.defineProperty(ids, "fieldTotal", { value: fieldTotal, enumerable: false }));
}

/**
 * The total of an unfiltered count over ids that carry one. A copy of the ids, another list or any other filter
 * property gets undefined and is counted afresh: only the holder of one check's value (the request that made it)
 * is answered from that check's snapshot.
 */
export function totalCarried(filter: FieldFilter): number | undefined {
  // Any property but the organizations (crop, season, or one added later) narrows the count.
  for (const [key, value] of Object.entries(filter)) {
    if (key !== "organizationIds" && value !== undefined) return undefined;
  }
  return filter.organizationIds.fieldTotal;
}
