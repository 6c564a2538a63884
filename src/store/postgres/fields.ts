// fields table on PostgreSQL: farm fields per organization, every read scoped to organization ids (see ../fields.ts).
import type { PgClient, PgQueryable, PgRow } from "./connect.ts";
import { boundariesTaken, FIELD_COLUMNS, SIZED_COLUMNS, toField } from "../rows.ts";
import type { BoundaryBudget, Field, FieldFilter, FieldStore, NewField } from "../contract.ts";
import { totalCarried } from "./bearer_totals.ts";

// The filter travels as one JSON parameter ($1: organization ids, crop, season), so every statement has one fixed
// text per filter combination, picked from this map. `fields` narrows the fields table, `counts` the trigger-kept
// field_counts, whose flags keep a filter value from matching NULL crops or seasons.
const FILTERS = {
  none: { fields: "", counts: "" },
  crop: {
    fields: "AND crop = ($1::text::json->>'crop')",
    counts: "AND crop_null = 0 AND crop = ($1::text::json->>'crop')",
  },
  season: {
    fields: "AND season = ($1::text::json->>'season')",
    counts: "AND season_null = 0 AND season = ($1::text::json->>'season')",
  },
  both: {
    fields: "AND crop = ($1::text::json->>'crop') AND season = ($1::text::json->>'season')",
    counts:
      "AND crop_null = 0 AND crop = ($1::text::json->>'crop') AND season_null = 0 AND season = ($1::text::json->>'season')",
  },
} as const;

type FilterKey = keyof typeof FILTERS;

const ORGANIZATIONS =
  "SELECT DISTINCT value::bigint AS organization_id FROM json_array_elements_text($1::text::json->'organizationIds')";

/** The total of the filter, as column `total`, from field_counts: cost follows distinct crop/season pairs, not fields. */
const countSql = (key: FilterKey) =>
  `SELECT COALESCE(SUM(n), 0)::bigint AS total FROM field_counts
   WHERE organization_id IN (${ORGANIZATIONS}) ${FILTERS[key].counts}`;

/**
 * The page after $2, at most $3 rows. Each organization is read by its own ordered index scan (fields_by_organization
 * and its crop and season siblings end in id) that stops after $3 rows, so a page costs at most organizations × $3
 * index entries however many fields an organization has; the rows of all organizations are then merged in id order.
 */
function pageSql(key: FilterKey, columns: string): string {
  const narrowed = FILTERS[key].fields;
  return `SELECT f.* FROM (${ORGANIZATIONS}) o CROSS JOIN LATERAL (
    SELECT ${columns} FROM fields WHERE organization_id = o.organization_id ${narrowed} AND id > $2
    ORDER BY id LIMIT $3) f
  ORDER BY f.id LIMIT $3`;
}

/** Total and page in one statement, so in one snapshot; without rows, one row with the total and null columns. */
function countAndPageSql(key: FilterKey, columns: string): string {
  const [total, page] = [countSql(key), pageSql(key, columns)];
  return `SELECT c.total, p.* FROM (${total}) c LEFT JOIN (${page}) p ON true ORDER BY p.id`;
}

/** Every statement text for each filter combination, built once from the fixed parts above. */
function statementsFor(key: FilterKey) {
  return {
    count: countSql(key),
    page: pageSql(key, FIELD_COLUMNS),
    sizedPage: pageSql(key, SIZED_COLUMNS),
    countAndPage: countAndPageSql(key, FIELD_COLUMNS),
    sizedCountAndPage: countAndPageSql(key, SIZED_COLUMNS),
  };
}

const STATEMENTS = {
  none: statementsFor("none"),
  crop: statementsFor("crop"),
  season: statementsFor("season"),
  both: statementsFor("both"),
} as const;

const FIND_BY_ID = `SELECT ${FIELD_COLUMNS} FROM fields WHERE id = $1
  AND organization_id IN (SELECT value::bigint FROM json_array_elements_text($2::text::json))`;
const SIZED_FIND_BY_ID = `SELECT ${SIZED_COLUMNS} FROM fields WHERE id = $1
  AND organization_id IN (SELECT value::bigint FROM json_array_elements_text($2::text::json))`;
const BOUNDARIES =
  "SELECT id, boundary FROM fields WHERE id IN (SELECT value::bigint FROM json_array_elements_text($1::text::json))";

/** The statements' texts for `filter`, and its one parameter. */
function scoped(filter: FieldFilter) {
  const { organizationIds, crop, season } = filter;
  const key: FilterKey = crop !== undefined
    ? (season !== undefined ? "both" : "crop")
    : (season !== undefined ? "season" : "none");
  return { sql: STATEMENTS[key], param: JSON.stringify({ organizationIds, crop, season }) };
}

/**
 * Runs `read` in a REPEATABLE READ, READ ONLY transaction, so its statements share one snapshot: a row and its
 * boundary, read by two statements, are of the same moment. No retry: a read-only transaction is never a
 * serialization or deadlock victim, and a retry would ask the caller's budget twice.
 */
function readTogether<T>(pg: PgClient, read: (tx: PgQueryable) => Promise<T>): Promise<T> {
  return pg.transaction(async (tx) => {
    // SET TRANSACTION must come before the first query; postgres.js sends both in one round trip, in this order.
    const [, result] = await Promise.all([
      tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
      read(tx),
    ]);
    return result;
  }, { retries: 0 });
}

/** The rows (SIZED_COLUMNS) as fields, with the boundaries the budget takes read by a second statement of `tx`. */
async function withBoundaries(
  tx: PgQueryable,
  rows: readonly PgRow[],
  budget: BoundaryBudget,
): Promise<Field[]> {
  const fields = rows.map(toField);
  const taken = fields.slice(0, boundariesTaken(rows, budget));
  if (taken.length === 0) return fields;
  const texts = new Map<number, string>();
  for (const row of await tx.query(BOUNDARIES, [JSON.stringify(taken.map((f) => f.id))])) {
    texts.set(Number(row.id), String(row.boundary));
  }
  for (const field of taken) field.boundary = texts.get(field.id);
  return fields;
}

/**
 * Rows per INSERT statement, and characters of JSON (boundaries mostly) per statement: a large import is a few
 * hundred statements, not one per field, and each statement stays well inside the statement timeout and work_mem.
 */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 1 << 20;

/** The fields as JSON arrays of at most BATCH_ROWS records and about BATCH_CHARS characters (one field may exceed it). */
function batches(fields: readonly NewField[]): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let chars = 0;
  for (const f of fields) {
    const record = JSON.stringify({
      name: f.name,
      area_ha: f.areaHa,
      crop: f.crop,
      season: f.season,
      boundary: f.boundary,
      centroid_lon: f.centroid.lon,
      centroid_lat: f.centroid.lat,
    });
    if (current.length > 0 && (current.length === BATCH_ROWS || chars + record.length > BATCH_CHARS)) {
      out.push(`[${current.join(",")}]`);
      current = [];
      chars = 0;
    }
    current.push(record);
    chars += record.length + 1;
  }
  if (current.length > 0) out.push(`[${current.join(",")}]`);
  return out;
}

// Ordered by position in the batch, so ids follow the file's order as on SQLite.
const INSERT_BATCH =
  `INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
  centroid_lat, created_at, updated_at)
  SELECT $1::bigint, f.name, f.area_ha, f.crop, f.season, f.boundary, f.centroid_lon, f.centroid_lat, $2::bigint, $2::bigint
  FROM ROWS FROM (json_to_recordset($3::text::json) AS (name text, area_ha double precision, crop text, season text,
    boundary text, centroid_lon double precision, centroid_lat double precision)) WITH ORDINALITY
    AS f(name, area_ha, crop, season, boundary, centroid_lon, centroid_lat, position)
  ORDER BY f.position`;

export function createPgFieldStore(pg: PgClient): FieldStore {
  return {
    async insertMany(organizationId, fields, { now, replace = false }) {
      const json = batches(fields);
      return await pg.transaction(async (tx) => {
        // Imports into one organization take turns on its row: a replace's DELETE then sees every field committed
        // before it (under READ COMMITTED it would miss the rows of a replace that committed while it waited, and
        // both files would stay), and field_counts rows are always locked after the organization's. NO KEY UPDATE
        // leaves the key-share locks of foreign keys free, so memberships can still be added meanwhile.
        await tx.query("SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE", [organizationId]);
        let removed = 0;
        if (replace) {
          const [row] = await tx.query<{ n: number }>(
            "WITH gone AS (DELETE FROM fields WHERE organization_id = $1 RETURNING 1) SELECT count(*) AS n FROM gone",
            [organizationId],
          );
          removed = row!.n;
        }
        for (const batch of json) await tx.query(INSERT_BATCH, [organizationId, now, batch]);
        return { inserted: fields.length, removed };
      });
    },
    async count(filter) {
      const known = totalCarried(filter);
      if (known !== undefined) return known;
      const { sql, param } = scoped(filter);
      const [row] = await pg.query<{ total: number }>(sql.count, [param]);
      return row!.total;
    },
    async page(filter, { afterId, limit }, boundaries) {
      const { sql, param } = scoped(filter);
      if (!boundaries) return (await pg.query(sql.page, [param, afterId, limit])).map(toField);
      return await readTogether(
        pg,
        async (tx) => withBoundaries(tx, await tx.query(sql.sizedPage, [param, afterId, limit]), boundaries),
      );
    },
    async countAndPage(filter, { afterId, limit }, boundaries) {
      const { sql, param } = scoped(filter);
      const split = (rows: PgRow[]) => ({
        total: Number(rows[0]!.total),
        rows: rows.filter((row) => row.id !== null),
      });
      if (!boundaries) {
        const { total, rows } = split(await pg.query(sql.countAndPage, [param, afterId, limit]));
        return { total, rows: rows.map(toField) };
      }
      return await readTogether(pg, async (tx) => {
        const { total, rows } = split(await tx.query(sql.sizedCountAndPage, [param, afterId, limit]));
        return { total, rows: await withBoundaries(tx, rows, boundaries) };
      });
    },
    async findById(id, organizationIds, boundaries) {
      const orgs = JSON.stringify(organizationIds);
      if (!boundaries) {
        const [row] = await pg.query(FIND_BY_ID, [id, orgs]);
        return row && toField(row);
      }
      return await readTogether(pg, async (tx) => {
        const rows = await tx.query(SIZED_FIND_BY_ID, [id, orgs]);
        return rows.length === 0 ? undefined : (await withBoundaries(tx, rows, boundaries))[0];
      });
    },
  };
}
