// fields table: farm fields per organization with GeoJSON boundaries; every read is scoped to organization ids.
import type { Db, Row } from "./database.ts";
import { createReadCache, createReadViews, type ReadView } from "./read_cache.ts";

/**
 * A field as pages and lookups return it. The boundary can be hundreds of kilobytes, so it is read only when the
 * caller passes a BoundaryBudget, and only as far as the budget goes: a query selecting only ids over nested pages
 * (4,600 rows within the GraphQL cost limit) otherwise held every boundary of every row in memory.
 */
export interface Field {
  id: number;
  organizationId: number;
  name: string;
  areaHa: number;
  crop: string | null;
  season: string | null;
  /** GeoJSON Polygon or MultiPolygon geometry as JSON text; absent when not asked for or past the budget. */
  boundary?: string;
  centroid: { lon: number; lat: number };
  createdAt: number;
  updatedAt: number;
}

/** A field to insert: the stored attributes without the ids and timestamps the store assigns. */
export interface NewField extends Omit<Field, "id" | "organizationId" | "createdAt" | "updatedAt" | "boundary"> {
  boundary: string;
}

/**
 * How many bytes of boundary text a read may still take. Asked once per row in id order before its text is read:
 * a refused row and every later one of that read come back without a boundary.
 */
export interface BoundaryBudget {
  take(bytes: number): boolean;
}

/** A page: the fields after `afterId` in id order, at most `limit` of them. */
export interface PageOptions {
  afterId: number;
  limit: number;
}

/**
 * Organization ids, ascending. The bearer check's (ActiveAccess.organizationIds) may carry `fieldTotal`, the field
 * total over exactly these ids read in the same statement (PostgreSQL's check reads it); `count` then answers an
 * unfiltered count over this very value without reading. Hand the check's value on as it is: a copy is a plain
 * array and is counted afresh.
 */
export type OrganizationIds = readonly number[] & { readonly fieldTotal?: number };

/** Which fields a query may see: always restricted to `organizationIds` (the acting user's memberships). */
export interface FieldFilter {
  organizationIds: OrganizationIds;
  crop?: string;
  season?: string;
}

export interface FieldStore {
  /**
   * Inserts all fields into the organization in one transaction: all or nothing. With `replace`, the organization's
   * existing fields are deleted in the same transaction (a re-import of an updated file). Returns the counts.
   */
  insertMany(
    organizationId: number,
    fields: readonly NewField[],
    options: { now: number; replace?: boolean },
  ): Promise<{ inserted: number; removed: number }>;
  /** How many fields the filter matches. */
  count(filter: FieldFilter): Promise<number>;
  /** Fields with id > afterId in id order, at most `limit`; with `boundaries`, their boundaries as far as it goes. */
  page(filter: FieldFilter, options: PageOptions, boundaries?: BoundaryBudget): Promise<Field[]>;
  /** `count` and `page` read in one snapshot, so the total and the rows describe the same moment. */
  countAndPage(filter: FieldFilter, options: PageOptions, boundaries?: BoundaryBudget): Promise<{ total: number; rows: Field[] }>;
  /** The field if it belongs to one of `organizationIds`; with `boundaries`, its boundary if the budget allows. */
  findById(id: number, organizationIds: readonly number[], boundaries?: BoundaryBudget): Promise<Field | undefined>;
}

// Every column but the boundary (see Field), and with its size when boundaries are wanted: octet_length needs no
// copy of the text into JavaScript.
export const FIELD_COLUMNS = "id, organization_id, name, area_ha, crop, season, centroid_lon, centroid_lat, created_at, updated_at";
export const SIZED_COLUMNS = `${FIELD_COLUMNS}, octet_length(boundary) AS boundary_bytes`;

/** A row of FIELD_COLUMNS (either backend) as a Field without its boundary. */
export function toField(row: Record<string, unknown>): Field {
  return {
    id: Number(row.id),
    organizationId: Number(row.organization_id),
    name: String(row.name),
    areaHa: Number(row.area_ha),
    crop: row.crop === null ? null : String(row.crop),
    season: row.season === null ? null : String(row.season),
    centroid: { lon: Number(row.centroid_lon), lat: Number(row.centroid_lat) },
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

// The organization list is passed as one JSON array parameter and expanded by json_each, so the SQL text
// stays fixed whatever the number of memberships. Each filter combination has its own fixed WHERE clause
// (picked from this map, never assembled from input) so SQLite can pick the matching covering index: an
// unfiltered COUNT reads only fields_by_organization, a crop COUNT only fields_by_organization_crop.
const SCOPE = {
  none: "organization_id IN (SELECT value FROM json_each(?))",
  crop: "organization_id IN (SELECT value FROM json_each(?)) AND crop = ?",
  season: "organization_id IN (SELECT value FROM json_each(?)) AND season = ?",
  both: "organization_id IN (SELECT value FROM json_each(?)) AND crop = ? AND season = ?",
} as const;

// The same filters over field_counts: the flags keep a filter value from matching NULL crops or seasons.
const COUNT_SCOPE = {
  none: "organization_id IN (SELECT value FROM json_each(?))",
  crop: "organization_id IN (SELECT value FROM json_each(?)) AND crop_null = 0 AND crop = ?",
  season: "organization_id IN (SELECT value FROM json_each(?)) AND season_null = 0 AND season = ?",
  both: "organization_id IN (SELECT value FROM json_each(?)) AND crop_null = 0 AND crop = ? AND season_null = 0 AND season = ?",
} as const;

type ScopeKey = keyof typeof SCOPE;

/** Which fixed WHERE clause a filter uses, and its parameters in order. */
function scopeParts(filter: FieldFilter): { key: ScopeKey; params: string[] } {
  const orgs = JSON.stringify(filter.organizationIds);
  const { crop, season } = filter;
  if (crop !== undefined && season !== undefined) return { key: "both", params: [orgs, crop, season] };
  if (crop !== undefined) return { key: "crop", params: [orgs, crop] };
  if (season !== undefined) return { key: "season", params: [orgs, season] };
  return { key: "none", params: [orgs] };
}

/** The WHERE clause and its parameters for a filter. */
export function scopeOf(filter: FieldFilter): { where: string; params: string[] } {
  const { key, params } = scopeParts(filter);
  return { where: SCOPE[key], params };
}

/** The same filter over field_counts. */
function countScopeOf(filter: FieldFilter): { where: string; params: string[] } {
  const { key, params } = scopeParts(filter);
  return { where: COUNT_SCOPE[key], params };
}

/**
 * Counts kept per view: one per filter a client asks for (its organizations, crop and season) between two writes.
 * A key is the filter's text, so it is bounded: 1,024 keys of at most 1 KiB. Real crops and seasons are short; a
 * user in more than about a hundred organizations is counted afresh each time.
 */
const COUNT_CACHE = { maxEntries: 1024, maxKeyLength: 1024 };

/** One key per filter: the organization list, crop and season, unambiguous whatever their text. */
function countKey(filter: FieldFilter): string {
  return JSON.stringify([filter.organizationIds, filter.crop ?? null, filter.season ?? null]);
}

/**
 * How many of `rows` (SIZED_COLUMNS, in id order) get their boundary: the budget is asked row by row and not again
 * after its first refusal.
 */
export function boundariesTaken(rows: readonly Record<string, unknown>[], budget: BoundaryBudget): number {
  let taken = 0;
  while (taken < rows.length && budget.take(Number(rows[taken]!.boundary_bytes))) taken++;
  return taken;
}

/** SQLite's field store: `count` may be given the view to read under (read_cache.ts); by default the current one. */
export interface SqliteFieldStore extends FieldStore {
  count(filter: FieldFilter, view?: ReadView): Promise<number>;
}

export function createFieldStore(db: Db, currentView: () => ReadView = createReadViews(db)): SqliteFieldStore {
  const counts = createReadCache<number>(db, COUNT_CACHE);
  const countNow = (filter: FieldFilter): number => {
    // From the trigger-kept field_counts (migration "field counts"): cost follows the number of distinct
    // crop/season pairs, not the number of fields.
    const { where, params } = countScopeOf(filter);
    const row = db.prepare(`SELECT COALESCE(SUM(n), 0) AS n FROM field_counts WHERE ${where}`).get(...params) as Row;
    return Number(row.n);
  };
  /** The rows' boundaries, in row order while the budget takes them; the caller holds the rows' snapshot. */
  const withBoundaries = (rows: Row[], budget: BoundaryBudget): Field[] => {
    const fields = rows.map(toField);
    const taken = boundariesTaken(rows, budget);
    if (taken === 0) return fields;
    const ids = JSON.stringify(fields.slice(0, taken).map((f) => f.id));
    const texts = new Map<number, string>();
    for (const row of db.prepare("SELECT id, boundary FROM fields WHERE id IN (SELECT value FROM json_each(?))").all(ids) as Row[]) {
      texts.set(Number(row.id), String(row.boundary));
    }
    for (const field of fields.slice(0, taken)) field.boundary = texts.get(field.id);
    return fields;
  };
  const pageNow = (filter: FieldFilter, { afterId, limit }: PageOptions, budget?: BoundaryBudget): Field[] => {
    const { where, params } = scopeOf(filter);
    const rows = db.prepare(`SELECT ${budget ? SIZED_COLUMNS : FIELD_COLUMNS} FROM fields WHERE ${where} AND id > ? ORDER BY id LIMIT ?`)
      .all(...params, afterId, limit) as Row[];
    return budget ? withBoundaries(rows, budget) : rows.map(toField);
  };
  return {
    async insertMany(organizationId, fields, { now, replace = false }) {
      return db.transaction(() => {
        const removed = replace
          ? Number(db.prepare("DELETE FROM fields WHERE organization_id = ?").run(organizationId).changes)
          : 0;
        const insert = db.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary,
          centroid_lon, centroid_lat, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
        for (const f of fields) {
          insert.run(organizationId, f.name, f.areaHa, f.crop, f.season, f.boundary, f.centroid.lon, f.centroid.lat, now, now);
        }
        return { inserted: fields.length, removed };
      });
    },
    async count(filter, view = currentView()) {
      // total_count is what most clients ask, again and again with one token: from the trigger-kept field_counts,
      // and kept under the view, so it costs no statement at all until something is written.
      return counts.read(view, countKey(filter), () => countNow(filter))!;
    },
    async page(filter, options, boundaries) {
      // With boundaries, two statements: read in one snapshot, so a row and its boundary are of the same moment.
      return boundaries ? db.readTogether(() => pageNow(filter, options, boundaries)) : pageNow(filter, options);
    },
    async countAndPage(filter, options, boundaries) {
      return db.readTogether(() => ({ total: countNow(filter), rows: pageNow(filter, options, boundaries) }));
    },
    async findById(id, organizationIds, boundaries) {
      const read = () => {
        const row = db.prepare(`SELECT ${boundaries ? SIZED_COLUMNS : FIELD_COLUMNS} FROM fields WHERE id = ?
          AND organization_id IN (SELECT value FROM json_each(?))`).get(id, JSON.stringify(organizationIds)) as Row | undefined;
        if (!row) return undefined;
        return boundaries ? withBoundaries([row], boundaries)[0] : toField(row);
      };
      return boundaries ? db.readTogether(read) : read();
    },
  };
}
