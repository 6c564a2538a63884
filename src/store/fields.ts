// fields table: farm fields per organization with GeoJSON boundaries; every read is scoped to organization ids.
import type { Db, Row } from "./sqlite.ts";
import { createReadCache, type ReadView } from "./read_cache.ts";

/**
 * A field as pages and lookups return it: every attribute but its boundary, which can be hundreds of kilobytes and
 * is read only for the fields a request serves it for (`boundaries`). A query selecting only ids over nested pages
 * (4,600 rows within the cost limit) otherwise held every boundary of every row in memory.
 */
export interface Field {
  id: number;
  organizationId: number;
  name: string;
  areaHa: number;
  crop: string | null;
  season: string | null;
  centroid: { lon: number; lat: number };
  createdAt: number;
  updatedAt: number;
}

/** A field to insert: the stored attributes without the ids and timestamps the store assigns. */
export interface NewField extends Omit<Field, "id" | "organizationId" | "createdAt" | "updatedAt"> {
  /** GeoJSON Polygon or MultiPolygon geometry, as JSON text. */
  boundary: string;
}

/** What `boundaries` read: the texts by field id, and whether the byte budget left any out. */
export interface Boundaries {
  texts: Map<number, string>;
  /** True when the next boundary in id order would have passed `maxBytes`: it and those after it are not read. */
  cut: boolean;
}

/** A page: the fields after `afterId` in id order, at most `limit` of them. */
export interface PageOptions {
  afterId: number;
  limit: number;
}

/** Which fields a query may see: always restricted to `organizationIds` (the acting user's memberships). */
export interface FieldFilter {
  organizationIds: readonly number[];
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
  /**
   * How many fields the filter matches, from the trigger-kept field_counts. With `view`, the request's own
   * (read_cache.ts), the answer is kept for the next request under the same view: counts change only by a write.
   */
  count(filter: FieldFilter, view?: ReadView): Promise<number>;
  /** Fields with id > afterId in id order, at most `limit`. */
  page(filter: FieldFilter, options: PageOptions): Promise<Field[]>;
  /** `count` and `page` read in one snapshot, so the total and the rows describe the same moment. */
  countAndPage(filter: FieldFilter, options: PageOptions): Promise<{ total: number; rows: Field[] }>;
  /** The field if it belongs to one of `organizationIds`. */
  findById(id: number, organizationIds: readonly number[]): Promise<Field | undefined>;
  /**
   * The GeoJSON text of the fields `ids` that belong to `organizationIds`, in id order for as long as their total
   * stays within `maxBytes` (the text is ASCII: characters are bytes). An id missing from `texts` without `cut`
   * names no such field (deleted since its page was read, or another organization's).
   */
  boundaries(ids: readonly number[], organizationIds: readonly number[], maxBytes: number): Promise<Boundaries>;
}

// Every column but the boundary (see Field).
const FIELD_COLUMNS = "id, organization_id, name, area_ha, crop, season, centroid_lon, centroid_lat, created_at, updated_at";
const IN_SCOPE = "id IN (SELECT value FROM json_each(?)) AND organization_id IN (SELECT value FROM json_each(?))";

function toField(row: Row): Field {
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

export function createFieldStore(db: Db): FieldStore {
  const counts = createReadCache<number>(db, COUNT_CACHE);
  const countNow = (filter: FieldFilter): number => {
    // From the trigger-kept field_counts (migration "field counts"): cost follows the number of distinct
    // crop/season pairs, not the number of fields.
    const { where, params } = countScopeOf(filter);
    const row = db.prepare(`SELECT COALESCE(SUM(n), 0) AS n FROM field_counts WHERE ${where}`).get(...params) as Row;
    return Number(row.n);
  };
  const pageNow = (filter: FieldFilter, { afterId, limit }: PageOptions): Field[] => {
    const { where, params } = scopeOf(filter);
    const rows = db.prepare(`SELECT ${FIELD_COLUMNS} FROM fields WHERE ${where} AND id > ? ORDER BY id LIMIT ?`)
      .all(...params, afterId, limit) as Row[];
    return rows.map(toField);
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
    async count(filter, view) {
      // total_count is what most clients ask, again and again with one token: under the request's view (taken
      // by its bearer check) it costs no statement at all until something is written.
      return view ? counts.read(view, countKey(filter), () => countNow(filter))! : countNow(filter);
    },
    async page(filter, options) {
      return pageNow(filter, options);
    },
    async countAndPage(filter, options) {
      return db.readTogether(() => ({ total: countNow(filter), rows: pageNow(filter, options) }));
    },
    async findById(id, organizationIds) {
      const row = db.prepare(`SELECT ${FIELD_COLUMNS} FROM fields WHERE id = ? AND organization_id IN (SELECT value FROM json_each(?))`)
        .get(id, JSON.stringify(organizationIds)) as Row | undefined;
      return row && toField(row);
    },
    async boundaries(ids, organizationIds, maxBytes) {
      const scope = [JSON.stringify(ids), JSON.stringify(organizationIds)];
      // Sizes first (octet_length needs no copy of the text into JavaScript), so what is read stays within the budget.
      return db.readTogether((): Boundaries => {
        const sizes = db.prepare(`SELECT id, octet_length(boundary) AS bytes FROM fields WHERE ${IN_SCOPE} ORDER BY id`)
          .all(...scope) as Row[];
        const fitting: number[] = [];
        let total = 0;
        for (const row of sizes) {
          total += Number(row.bytes);
          if (total > maxBytes) break;
          fitting.push(Number(row.id));
        }
        const texts = new Map<number, string>();
        if (fitting.length > 0) {
          const rows = db.prepare(`SELECT id, boundary FROM fields WHERE ${IN_SCOPE}`).all(JSON.stringify(fitting), scope[1]!) as Row[];
          for (const row of rows) texts.set(Number(row.id), String(row.boundary));
        }
        return { texts, cut: fitting.length < sizes.length };
      });
    },
  };
}
