// The PostgreSQL baseline against SQLite's migrated schema: tables, columns, keys, indexes, foreign keys, step names.
import assert from "node:assert/strict";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { type Db, openDatabase } from "../../src/store/sqlite/database.ts";
import { openPostgres, type PgQueryable } from "../../src/store/postgres/connect.ts";
import { migratePostgres, PG_MIGRATIONS } from "../../src/store/postgres/migrations.ts";
import { test } from "../helpers/bounded.ts";
import { postgresTest } from "../helpers/postgres.ts";

/** The classes a column's type falls into on both backends: what a shared row mapper can rely on. */
type TypeClass = "integer" | "text" | "real" | "blob";

interface TableShape {
  /** "name type-class null|not null", sorted by name: SQLite appends ALTER TABLE columns, order is not compared. */
  columns: string[];
  primaryKey: string[];
  /** "unique (a, b)" or "(a) partial", sorted; primary keys are not listed here. */
  indexes: string[];
  /** "from -> table(to) on delete ACTION", sorted. */
  foreignKeys: string[];
}

type Schema = Record<string, TableShape>;

/** SQLite's type affinity rules (https://sqlite.org/datatype3.html §3.1), narrowed to the four classes. */
function sqliteClass(declared: string): TypeClass {
  const type = declared.toUpperCase();
  if (type.includes("INT")) return "integer";
  if (/CHAR|CLOB|TEXT/.test(type)) return "text";
  if (type === "" || type.includes("BLOB")) return "blob";
  if (/REAL|FLOA|DOUB/.test(type)) return "real";
  throw new Error(`column type ${declared} has NUMERIC affinity, which PostgreSQL has no class for`);
}

const PG_CLASSES: Record<string, TypeClass> = {
  bigint: "integer",
  integer: "integer",
  smallint: "integer",
  text: "text",
  "character varying": "text",
  "double precision": "real",
  real: "real",
  bytea: "blob",
};

function sqliteSchema(db: Db): Schema {
  const schema: Schema = {};
  const tables = db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  ).all();
  for (const { name } of tables as { name: string }[]) {
    const info = db.prepare('SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?)').all(name) as {
      name: string;
      type: string;
      nn: number;
      pk: number;
    }[];
    const indexes = db.prepare('SELECT name, "unique" AS u, origin, partial FROM pragma_index_list(?)').all(
      name,
    ) as { name: string; u: number; origin: string; partial: number }[];
    const foreignKeys = db.prepare(
      'SELECT "from" AS f, "table" AS t, "to" AS c, on_delete FROM pragma_foreign_key_list(?)',
    )
      .all(name) as { f: string; t: string; c: string; on_delete: string }[];
    schema[name] = {
      // A primary key column is never NULL, though table_info reports notnull 0 for INTEGER PRIMARY KEY.
      columns: info.map((c) => `${c.name} ${sqliteClass(c.type)} ${c.nn || c.pk ? "not null" : "null"}`)
        .sort(),
      primaryKey: info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name),
      indexes: indexes.filter((i) => i.origin !== "pk").map((i) => {
        const columns = (db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(i.name) as {
          name: string;
        }[])
          .map((c) => c.name);
        return `${i.u ? "unique " : ""}(${columns.join(", ")})${i.partial ? " partial" : ""}`;
      }).sort(),
      foreignKeys: foreignKeys.map((k) => `${k.f} -> ${k.t}(${k.c}) on delete ${k.on_delete}`).sort(),
    };
  }
  return schema;
}

const PG_DELETE_ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

async function postgresSchema(pg: PgQueryable): Promise<Schema> {
  const schema: Schema = {};
  const tables = await pg.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`);
  for (const { name } of tables) {
    const columns = await pg.query<{ name: string; type: string; nullable: string }>(
      `SELECT column_name AS name,
      data_type AS type, is_nullable AS nullable FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1`,
      [name],
    );
    const indexes = await pg.query<{ primary: boolean; unique: boolean; partial: boolean; keys: string[] }>(
      `SELECT
      i.indisprimary AS primary, i.indisunique AS unique, i.indpred IS NOT NULL AS partial,
      array_to_json(ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) k)) AS keys
      FROM pg_index i WHERE i.indrelid = (quote_ident(current_schema()) || '.' || quote_ident($1))::regclass`,
      [name],
    );
    const foreignKeys = await pg.query<{ f: string; t: string; c: string; action: string }>(
      `SELECT
      a.attname AS f, confrelid::regclass::text AS t, fa.attname AS c, confdeltype AS action
      FROM pg_constraint k
      JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
      JOIN pg_attribute fa ON fa.attrelid = k.confrelid AND fa.attnum = k.confkey[1]
      WHERE k.contype = 'f' AND k.conrelid = (quote_ident(current_schema()) || '.' || quote_ident($1))::regclass`,
      [name],
    );
    const names = columns.map((c) => c.name);
    // An expression key (lower(username COLLATE "C")) stands for the one column it reads.
    const column = (key: string) =>
      names.includes(key) ? key : names.filter((n) => new RegExp(`\\b${n}\\b`).test(key)).join("+");
    schema[name] = {
      columns: columns.map((c) => {
        const typeClass = PG_CLASSES[c.type];
        assert.ok(typeClass, `${name}.${c.name} has type ${c.type}, outside the classes SQLite shares`);
        return `${c.name} ${typeClass} ${c.nullable === "YES" ? "null" : "not null"}`;
      }).sort(),
      primaryKey: indexes.find((i) => i.primary)?.keys.map(column) ?? [],
      indexes: indexes.filter((i) => !i.primary)
        .map((i) =>
          `${i.unique ? "unique " : ""}(${i.keys.map(column).join(", ")})${i.partial ? " partial" : ""}`
        ).sort(),
      foreignKeys: foreignKeys.map((k) => `${k.f} -> ${k.t}(${k.c}) on delete ${PG_DELETE_ACTIONS[k.action]}`)
        .sort(),
    };
  }
  return schema;
}

/** The tables whose shapes differ, by name, each with both sides: a readable failure. */
function differences(
  sqlite: Schema,
  postgres: Schema,
): Record<string, { sqlite?: TableShape; postgres?: TableShape }> {
  const out: Record<string, { sqlite?: TableShape; postgres?: TableShape }> = {};
  for (const table of new Set([...Object.keys(sqlite), ...Object.keys(postgres)])) {
    if (JSON.stringify(sqlite[table]) !== JSON.stringify(postgres[table])) {
      out[table] = { sqlite: sqlite[table], postgres: postgres[table] };
    }
  }
  return out;
}

async function migratedSchema(url: string): Promise<Schema> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    await migratePostgres(pg);
    return await postgresSchema(pg);
  } finally {
    await pg.close();
  }
}

postgresTest("the PostgreSQL baseline has SQLite's tables, columns, keys and indexes", async ({ url }) => {
  const sqlite = openDatabase(":memory:");
  try {
    const expected = sqliteSchema(sqlite);
    assert.ok(Object.keys(expected).length >= 15, "SQLite's schema was read");
    assert.deepEqual(differences(expected, await migratedSchema(url)), {});
  } finally {
    sqlite.close();
  }
});

postgresTest(
  "the comparison fails when a SQLite step adds a column or an index that PostgreSQL lacks",
  async ({ url }) => {
    const postgres = await migratedSchema(url);
    for (
      const change of [
        "ALTER TABLE users ADD COLUMN nickname TEXT",
        "CREATE UNIQUE INDEX tokens_by_scope ON tokens(scope)",
      ]
    ) {
      const sqlite = openDatabase(":memory:");
      try {
        assert.deepEqual(differences(sqliteSchema(sqlite), postgres), {});
        sqlite.exec(change);
        const table = change.includes("users") ? "users" : "tokens";
        assert.deepEqual(Object.keys(differences(sqliteSchema(sqlite), postgres)), [table], change);
      } finally {
        sqlite.close();
      }
    }
  },
);

test("PostgreSQL has a step of the same name for every SQLite step, at the same version", () => {
  assert.deepEqual(PG_MIGRATIONS.map((m) => m.name), MIGRATIONS.map((m) => m.name));
});
