// Benchmark databases on PostgreSQL: the rows of a seeded SQLite file copied into a migrated PostgreSQL database, so
// both stores are measured over the same clients, users, fields and refresh-token pool.
import { DatabaseSync } from "node:sqlite";
import { openPostgres, type PgValue } from "../src/store/postgres/connect.ts";
import { migratePostgres } from "../src/store/postgres/migrations.ts";

/**
 * Tables in an order that satisfies every foreign key. field_counts is not copied: PostgreSQL's trigger builds it
 * from the copied fields, as SQLite's did. Tables the SQLite file has and this list lacks are copied after these.
 */
const ORDER = [
  "organizations", "users", "memberships", "clients", "grant_families", "authorization_codes", "tokens", "sessions",
  "consents", "fields", "audit_events", "demo_states", "server_secrets",
];
const SKIPPED = new Set(["schema_migrations", "field_counts"]);
/** Rows per INSERT: well under PostgreSQL's 65 535 bound parameters for the widest table. */
const BATCH = 1_000;

/** Copies every row of the SQLite file at `sqlitePath` into the empty database at `url`, which it migrates first. */
export async function copyToPostgres(sqlitePath: string, url: string): Promise<{ rows: number }> {
  const sqlite = new DatabaseSync(sqlitePath, { readOnly: true });
  const pg = await openPostgres(url, { max: 1, statementTimeoutMs: 600_000 });
  try {
    await migratePostgres(pg);
    const present = new Set(
      (await pg.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'"))
        .map((r) => r.name),
    );
    const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string }[]).map((r) => r.name).filter((name) => present.has(name) && !SKIPPED.has(name));
    tables.sort((a, b) => rank(a) - rank(b));
    let rows = 0;
    for (const table of tables) {
      // Table and column names come from the two schemas, never from input; quoted as identifiers all the same.
      const columns = (sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[])
        .map((c) => c.name);
      const described = await pg.query<{ name: string; identity: string }>(
        `SELECT column_name AS name, is_identity AS identity FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = $1`,
        [table],
      );
      const pgColumns = new Set(described.map((c) => c.name));
      const shared = columns.filter((c) => pgColumns.has(c));
      const list = shared.map((c) => `"${c}"`).join(", ");
      let batch: PgValue[][] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const values = batch.map((_, r) => `(${shared.map((_, c) => `$${r * shared.length + c + 1}`).join(", ")})`);
        await pg.query(`INSERT INTO "${table}" (${list}) VALUES ${values.join(", ")}`, batch.flat());
        rows += batch.length;
        batch = [];
      };
      for (const row of sqlite.prepare(`SELECT ${list} FROM "${table}"`).iterate() as Iterable<Record<string, PgValue>>) {
        batch.push(shared.map((c) => row[c] ?? null));
        if (batch.length === BATCH) await flush();
      }
      await flush();
      // Rows came with their ids: move each identity past them, so the servers' own inserts do not collide.
      if (described.some((c) => c.name === "id" && c.identity === "YES")) {
        await pg.query(`SELECT setval(pg_get_serial_sequence($1::text, 'id')::regclass, MAX(id)) FROM "${table}"
          HAVING COUNT(*) > 0`, [table]);
      }
    }
    await pg.exec("ANALYZE");
    return { rows };
  } finally {
    sqlite.close();
    await pg.close();
  }
}

function rank(table: string): number {
  const at = ORDER.indexOf(table);
  return at < 0 ? ORDER.length : at;
}
