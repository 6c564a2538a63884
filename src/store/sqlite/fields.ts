// fields table: farm fields per organization with GeoJSON boundaries; every read is scoped to organization ids.
import type { Db, Row } from "./database.ts";
import { createReadCache, createReadViews, type ReadView } from "./read_cache.ts";
import type { BoundaryBudget, Field, FieldFilter, FieldStore, PageOptions } from "../contract.ts";
import { boundariesTaken, FIELD_COLUMNS, SIZED_COLUMNS, toField } from "../rows.ts";

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
