// Copies a SQLite installation into an empty PostgreSQL database at the SQL level: every row of every table, ids kept.
import type { SqliteSnapshot, SqlValue } from "../contract.ts";
import type { PgClient, PgQueryable, PgValue } from "./connect.ts";

/**
 * The tables copied, each after every table it references, so each row's foreign keys already hold as it goes in;
 * within a table rows go in primary-key order, which puts a rotated token's parent before it.
 */
export const COPIED_TABLES = [
  "organizations",
  "users",
  "memberships",
  "clients",
  "grant_families",
  "authorization_codes",
  "tokens",
  "sessions",
  "consents",
  "fields",
  "audit_events",
  "demo_states",
  "server_secrets",
  "doorkeeper_imports",
] as const;

/**
 * Tables the target fills itself. field_counts follows the fields rows through PostgreSQL's triggers as they go in,
 * so it comes out exact for the rows copied; copying it as well would count every field twice. schema_migrations
 * was written by the target's own migration. throttle_counters holds failure counts for the current window only,
 * which the move (a stop and a start) ends anyway; dpop_proofs likewise the DPoP proofs of the current window, whose
 * replay the move's stop outlasts unless it takes under FIELDGATE_DPOP_WINDOW.
 */
const FILLED_BY_TARGET: readonly string[] = ["field_counts", "schema_migrations", "throttle_counters", "dpop_proofs"];

/** Rows per INSERT at most; fewer when they would pass the parameter or byte bound (a boundary can be 400 KB). */
const BATCH_ROWS = 500;
/** PostgreSQL binds at most 65 535 parameters per statement. */
const BATCH_PARAMETERS = 30_000;
const BATCH_BYTES = 4 * 1_048_576;

/** What a copy did: every table's rows (field_counts as the triggers rebuilt it), or the target tables that had rows. */
export type CopyOutcome =
  | { copied: true; rows: Record<string, number> }
  | { copied: false; occupied: string[] };

/** The target's tables: each one's columns in order, and which of them are identity columns. */
interface TargetSchema {
  columns: Map<string, string[]>;
  identities: { table: string; column: string }[];
}

/**
 * Copies every row of `source` (a SQLite file at the current schema version) into `pg` (migrated to the same version)
 * in one transaction, ids and digests as they are, then moves each identity sequence past the highest id the source
 * ever handed out. Refuses, writing nothing, when any table of the target already holds a row.
 * @throws Error when the two schemas differ (a table or column one of them lacks): this copy would lose data
 */
export async function copySqliteToPostgres(source: SqliteSnapshot, pg: PgClient): Promise<CopyOutcome> {
  const target = await readTargetSchema(pg);
  const domain = [...target.columns.keys()].filter((table) => table !== "schema_migrations");
  return await pg.transaction(async (tx) => {
    // Taken before looking: another writer (a `serve` started early on the target) waits until this commits, so
    // the target is still empty when the rows go in, and nothing lands between the copied rows.
    await tx.query(`LOCK TABLE ${domain.map(quoteIdent).join(", ")} IN EXCLUSIVE MODE`);
    const occupied = await occupiedTables(tx, domain);
    if (occupied.length > 0) return { copied: false, occupied };
    const rows: Record<string, number> = {};
    for (const table of COPIED_TABLES) rows[table] = await copyTable(source, tx, table, target.columns.get(table)!);
    for (const { table, column } of target.identities) await advanceSequence(source, tx, table, column);
    const [counts] = await tx.query<{ n: number }>("SELECT COUNT(*) AS n FROM field_counts");
    rows.field_counts = counts!.n;
    return { copied: true, rows };
  }, { retries: 0 });
}

/** The target's base tables and columns; refuses a schema with a table this copy does not know or lacks one it does. */
async function readTargetSchema(pg: PgQueryable): Promise<TargetSchema> {
  const found = await pg.query<{ table_name: string; column_name: string; is_identity: string }>(
    `SELECT c.table_name, c.column_name, c.is_identity
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name, c.ordinal_position`,
  );
  const columns = new Map<string, string[]>();
  const identities: TargetSchema["identities"] = [];
  for (const row of found) {
    columns.set(row.table_name, [...(columns.get(row.table_name) ?? []), row.column_name]);
    if (row.is_identity === "YES") identities.push({ table: row.table_name, column: row.column_name });
  }
  const known = new Set<string>([...COPIED_TABLES, ...FILLED_BY_TARGET]);
  const unknown = [...columns.keys()].filter((table) => !known.has(table));
  const missing = COPIED_TABLES.filter((table) => !columns.has(table));
  if (unknown.length > 0 || missing.length > 0) {
    throw new Error(
      `the PostgreSQL schema does not match what copy-store copies (unknown tables: ${unknown.join(", ") || "none"}; ` +
        `missing: ${missing.join(", ") || "none"})`,
    );
  }
  return { columns, identities };
}

/** The tables among `tables` that hold at least one row, in one statement. */
async function occupiedTables(tx: PgQueryable, tables: readonly string[]): Promise<string[]> {
  const probes = tables.map((table, i) => `SELECT $${i + 1}::text AS name WHERE EXISTS (SELECT 1 FROM ${quoteIdent(table)})`);
  const rows = await tx.query<{ name: string }>(probes.join(" UNION ALL "), tables);
  return rows.map((row) => row.name);
}

/** Copies one table's rows in primary-key order, in multi-row INSERTs; returns how many. */
async function copyTable(source: SqliteSnapshot, tx: PgQueryable, table: string, columns: readonly string[]): Promise<number> {
  const info = source.all(`PRAGMA table_info(${quoteIdent(table)})`);
  const sourceColumns = info.map((column) => String(column.name));
  if ([...sourceColumns].sort().join() !== [...columns].sort().join()) {
    throw new Error(
      `table ${table} has columns (${sourceColumns.join(", ")}) in SQLite but (${columns.join(", ")}) in PostgreSQL`,
    );
  }
  const key = info.filter((column) => Number(column.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk))
    .map((column) => quoteIdent(String(column.name)));
  const list = columns.map(quoteIdent).join(", ");
  const maxRows = Math.min(BATCH_ROWS, Math.floor(BATCH_PARAMETERS / columns.length));
  let batch: PgValue[] = [];
  let bytes = 0;
  let copied = 0;
  const flush = async () => {
    const rows = batch.length / columns.length;
    if (rows === 0) return;
    await tx.query(`INSERT INTO ${quoteIdent(table)} (${list}) VALUES ${placeholders(rows, columns.length)}`, batch);
    copied += rows;
    batch = [];
    bytes = 0;
  };
  for (const row of source.iterate(`SELECT ${list} FROM ${quoteIdent(table)} ORDER BY ${key.join(", ") || "rowid"}`)) {
    for (const value of row) {
      batch.push(toPg(value));
      bytes += typeof value === "string" ? value.length : 8;
    }
    if (batch.length / columns.length >= maxRows || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return copied;
}

/**
 * Sets the sequence behind an identity column to the highest id the source handed out, so the next row gets the one
 * after it: the largest id copied, or SQLite's AUTOINCREMENT high-water mark when larger (field ids are never
 * reused, not even those of fields deleted before the copy). A table that never had a row keeps its sequence at 1.
 */
async function advanceSequence(source: SqliteSnapshot, tx: PgQueryable, table: string, column: string): Promise<void> {
  const [copied] = source.all(`SELECT MAX(${quoteIdent(column)}) AS id FROM ${quoteIdent(table)}`);
  const remembered = autoincrementMark(source, table);
  const highest = Math.max(Number(copied?.id ?? 0), remembered);
  if (highest < 1) return;
  await tx.query("SELECT setval(pg_get_serial_sequence($1, $2), $3)", [quoteIdent(table), column, highest]);
}

/** The largest id SQLite's AUTOINCREMENT has handed out for `table`; 0 when the table does not use it. */
function autoincrementMark(source: SqliteSnapshot, table: string): number {
  const [present] = source.all("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'");
  if (Number(present?.n) === 0) return 0;
  const row = source.all("SELECT name, seq FROM sqlite_sequence").find((entry) => entry.name === table);
  return Number(row?.seq ?? 0);
}

/** "($1, $2), ($3, $4)" for `rows` rows of `width` values. */
function placeholders(rows: number, width: number): string {
  const groups: string[] = [];
  for (let r = 0; r < rows; r++) {
    groups.push(`(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`);
  }
  return groups.join(", ");
}

/**
 * A table or column name as a quoted identifier. The names come from the two databases' own catalogs, checked
 * against each other, never from input; quoting keeps any of them a name.
 */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQLite value as a bound parameter: an integer read as bigint (beyond 2^53) goes as its decimal text. */
function toPg(value: SqlValue): PgValue {
  return typeof value === "bigint" ? value.toString() : value;
}
