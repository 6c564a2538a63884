// `migrate`: applies the database's pending schema steps explicitly, to a SQLite file or a PostgreSQL database.
import type { Config } from "../../config.ts";
import { ForeignDatabaseError, SchemaTooNewError } from "../../store/errors.ts";
import { MIGRATIONS } from "../../store/sqlite/migrations.ts";
import { isUnreachable, poolOptions } from "../database.ts";
import { messageOf } from "../text.ts";
import { type CliDeps, CommandError, type DatabaseCommand } from "../types.ts";

interface Outcome {
  /** The database as it may be shown: a path, or a URL without its password. */
  database: string;
  applied: string[];
  version: number;
}

export const migrate: DatabaseCommand = {
  name: "migrate",
  summary:
    "apply pending schema migrations to --db (a SQLite file, created if missing, or a postgres:// URL)",
  positionals: [],
  flags: {},
  opensDatabase: true,
  async run({ config, deps }) {
    const url = config.databaseUrl;
    const outcome = await refusingKnownFaults(() =>
      url === undefined ? migrateSqliteFile(config.dbPath, deps) : migratePostgresUrl(url, config, deps)
    );
    const { database, applied, version } = outcome;
    const text = applied.length === 0
      ? `${database} is up to date (schema version ${version}).\n`
      : `Migrated ${database} to schema version ${version}; applied:\n${
        applied.map((name) => `  ${name}\n`).join("")
      }`;
    return { json: { database, applied, version }, text };
  },
};

/** Opens the file as the store does (creating it and its directory, migrating under SQLite's write lock). */
async function migrateSqliteFile(path: string, deps: CliDeps): Promise<Outcome> {
  const applied: string[] = [];
  const store = await deps.openStore(path, { onMigrated: (names) => applied.push(...names) });
  await store.close();
  return { database: path, applied, version: MIGRATIONS.length };
}

/** Loaded on demand, so that postgres.js and the PostgreSQL schema stay out of every SQLite run of the CLI. */
async function migratePostgresUrl(url: string, config: Readonly<Config>, deps: CliDeps): Promise<Outcome> {
  const [{ openPostgres, describePostgresUrl }, { migratePostgres }] = await Promise.all([
    import("../../store/postgres/connect.ts"),
    import("../../store/postgres/migrations.ts"),
  ]);
  const where = describePostgresUrl(url);
  const unreachable = (error: unknown) => new CommandError(`cannot migrate ${where}: ${messageOf(error)}`, { cause: error });
  const pg = await openPostgres(url, { ...poolOptions(config), max: 1 }).catch((error) => {
    throw isUnreachable(error) ? unreachable(error) : error;
  });
  try {
    const report = await migratePostgres(pg, { now: deps.clock() });
    return { database: where, ...report };
  } catch (error) {
    if (isUnreachable(error)) throw unreachable(error);
    throw error;
  } finally {
    await pg.close();
  }
}

/** A database newer than this fieldgate, or not fieldgate's at all, fails the command (exit 1) with its message. */
async function refusingKnownFaults(fn: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof SchemaTooNewError || error instanceof ForeignDatabaseError) {
      throw new CommandError(error.message);
    }
    throw error;
  }
}
