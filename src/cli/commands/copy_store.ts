// `copy-store --from PATH --to URL`: moves a SQLite installation to an empty PostgreSQL database, every row as it is.
import { checkDatabaseLocation, isPostgresUrl } from "../../config.ts";
import { ForeignDatabaseError, SchemaTooNewError } from "../../store/errors.ts";
import { MIGRATIONS } from "../../store/sqlite/migrations.ts";
import { openSnapshot } from "../../store/sqlite/snapshot.ts";
import type { SqliteSnapshot } from "../../store/contract.ts";
import { requireFlag } from "../args.ts";
import { describeUrl, isUnreachable, poolOptions } from "../database.ts";
import { messageOf } from "../text.ts";
import { CommandError, type CommandResult, type DatabaseCommand, type ParsedArgs, UsageError } from "../types.ts";

/**
 * One copy is one transaction, so each of its statements (a batch of rows, a sequence) may take longer than a request's
 * would; a stuck one still ends the copy rather than holding the target locked.
 */
const COPY_STATEMENT_TIMEOUT_MS = 120_000;

function locations(args: ParsedArgs): { from: string; to: string } {
  const from = requireFlag(args, "from");
  const to = requireFlag(args, "to");
  if (isPostgresUrl(from)) throw new UsageError("--from names the SQLite file to copy, not a PostgreSQL URL");
  try {
    checkDatabaseLocation("--from", from);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
  if (!isPostgresUrl(to)) throw new UsageError("--to must be a postgres:// or postgresql:// URL");
  return { from, to };
}

export const copyStore: DatabaseCommand = {
  name: "copy-store",
  summary: "copy a SQLite database (--from) into an empty PostgreSQL database (--to); stop serve on the file first",
  positionals: [],
  flags: {
    from: { type: "string", value: "PATH", description: "the SQLite file to copy (read only, left as it is)" },
    to: { type: "string", value: "URL", description: "postgres:// URL of an empty database (its tables are created if missing)" },
  },
  opensDatabase: true,
  validate(args) {
    // Both ends are named explicitly: --db (or the environment) naming one of them would be a guess at which.
    if (args.flags.db !== undefined) throw new UsageError("copy-store names its databases with --from and --to, not --db");
    locations(args);
  },
  async run({ args, config, deps }) {
    const { from, to } = locations(args);
    if (!(await deps.fileExists(from))) throw new UsageError(`no database at ${from}: check --from`);
    const source = openSnapshot(from);
    try {
      checkSourceVersion(source, from);
      const where = await describeUrl(to);
      const rows = await copyInto(source, to, { where, options: { ...poolOptions(config), now: deps.clock() } });
      return reportCopy(from, where, rows);
    } finally {
      source.close();
    }
  },
};

/**
 * The source must be at this fieldgate's schema version: the copy maps its tables one for one onto the target's.
 * An older file is not migrated here: the copy leaves its source exactly as it was, the way back should the move go
 * wrong, and an older fieldgate still pointed at a migrated file would refuse to start. `migrate` is the step for
 * that, taken knowingly (after a `backup`).
 */
function checkSourceVersion(source: SqliteSnapshot, from: string): void {
  const version = sqliteVersion(source);
  if (version === undefined) {
    throw new CommandError(`${from} is not a fieldgate database (it has no schema_migrations table); check --from`);
  }
  if (version > MIGRATIONS.length) throw new CommandError(new SchemaTooNewError(version, MIGRATIONS.length).message);
  if (version < MIGRATIONS.length) {
    throw new UsageError(
      `${from} is at schema version ${version}, this fieldgate at ${MIGRATIONS.length}: back it up and run ` +
        `\`fieldgate migrate --db ${from}\` first (copy-store never changes its source)`,
    );
  }
}

/** MAX(version) of schema_migrations, or undefined when the file has no such table (not a fieldgate database). */
function sqliteVersion(source: SqliteSnapshot): number | undefined {
  const [known] = source.all("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
  if (Number(known?.n) === 0) return undefined;
  return Number(source.all("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations")[0]?.v);
}

/** Migrates the target (under its advisory lock), then copies; returns the rows per table. */
async function copyInto(
  source: SqliteSnapshot,
  url: string,
  { where, options }: { where: string; options: { max?: number; prepare?: boolean; now: number } },
): Promise<Record<string, number>> {
  // Loaded on demand, like every PostgreSQL module outside store/postgres/.
  const [{ openPostgres }, { migratePostgres }, { copySqliteToPostgres }] = await Promise.all([
    import("../../store/postgres/connect.ts"),
    import("../../store/postgres/migrations.ts"),
    import("../../store/postgres/copy.ts"),
  ]);
  const pg = await openPostgres(url, { ...options, max: 1, statementTimeoutMs: COPY_STATEMENT_TIMEOUT_MS }).catch((error) => {
    throw isUnreachable(error) ? new CommandError(`cannot copy to ${where}: ${messageOf(error)}`, { cause: error }) : error;
  });
  try {
    await migratePostgres(pg, { now: options.now });
    const outcome = await copySqliteToPostgres(source, pg);
    if (!outcome.copied) {
      throw new UsageError(
        `${where} is not empty (rows in ${outcome.occupied.join(", ")}); copy-store fills an empty database only, ` +
          "and wrote nothing",
      );
    }
    return outcome.rows;
  } catch (error) {
    if (isUnreachable(error)) throw new CommandError(`cannot copy to ${where}: ${messageOf(error)}`, { cause: error });
    if (error instanceof SchemaTooNewError || error instanceof ForeignDatabaseError) throw new CommandError(error.message);
    throw error;
  } finally {
    await pg.close();
  }
}

function reportCopy(from: string, to: string, rows: Record<string, number>): CommandResult {
  const width = Math.max(...Object.keys(rows).map((table) => table.length)) + 2;
  const lines = Object.entries(rows).map(([table, n]) => `  ${table.padEnd(width)}${n}\n`).join("");
  return {
    json: { from, to, rows },
    text: `Copied ${from} to ${to}:\n${lines}` +
      "(field_counts rebuilt from the fields copied.) Point fieldgate at the new database with FIELDGATE_DATABASE_URL " +
      "(or --db) and unset FIELDGATE_DB.\n",
  };
}
