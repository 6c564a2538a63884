// The database a command works on: a SQLite file (FIELDGATE_DB) or PostgreSQL (FIELDGATE_DATABASE_URL), named safely.
import { type Config, isPostgresUrl } from "../config.ts";
import type { PgOptions } from "../store/postgres/connect.ts";
import { openStore, type Store } from "../store/store.ts";
import { messageOf } from "./text.ts";
import { CommandError, UsageError, type CliDeps, type ParsedArgs, type StoreCommand } from "./types.ts";

/**
 * CliDeps.openStore for a runtime whose `createDatabaseFile` creates a missing SQLite file (and its directory) with
 * the modes the adapter chooses. The PostgreSQL modules, and postgres.js with them, are loaded on the first
 * PostgreSQL URL, so a SQLite deployment never loads them.
 */
export function createStoreOpener(createDatabaseFile: (path: string) => Promise<void>): CliDeps["openStore"] {
  return async (location, options) => {
    if (isPostgresUrl(location)) {
      const { openPostgresStore } = await import("../store/postgres/store.ts");
      return openPostgresStore(location, options);
    }
    if (location !== ":memory:") await createDatabaseFile(location);
    return openStore(location, options);
  };
}

/** The pool settings FIELDGATE_DATABASE_POOL, _PREPARE and _CONNECT_TIMEOUT give every PostgreSQL pool. */
export function poolOptions(config: Readonly<Config>): Pick<PgOptions, "max" | "prepare" | "connectTimeoutSeconds"> {
  return {
    max: config.databasePool,
    prepare: config.databasePrepare,
    connectTimeoutSeconds: config.databaseConnectTimeout,
  };
}

/**
 * A PostgreSQL URL as messages and logs may show it: without its password. Loaded on demand, like everything under
 * store/postgres/, so a SQLite run never loads those modules.
 */
export async function describeUrl(url: string): Promise<string> {
  const { describePostgresUrl } = await import("../store/postgres/connect.ts");
  return describePostgresUrl(url);
}

/** The configured database as messages and logs may show it: the SQLite path, or the URL without its password. */
export function describeDatabase(config: Readonly<Config>): Promise<string> {
  return config.databaseUrl === undefined ? Promise.resolve(config.dbPath) : describeUrl(config.databaseUrl);
}

/**
 * A PostgreSQL server that cannot be reached or will not let this user in: the operator's to fix, so a message (named
 * without the password), not a stack. Network errors (ECONNREFUSED, postgres.js's CONNECT_TIMEOUT) and the SQLSTATE
 * classes 08 (connection), 28 (authorization), 3D (no such database), 42501 (no privilege) and 57P03 (starting up).
 */
export function isUnreachable(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^(E[A-Z]+|CONNECT_TIMEOUT|08...|28...|3D...|42501|57P03)$/.test(code);
}

/**
 * Opens the store `command` works on through deps.openStore. A command that may not create a database is refused
 * (UsageError) where there is none: a missing SQLite file, or a PostgreSQL database without fieldgate's tables.
 * @throws CommandError naming the PostgreSQL database (without its password) when it cannot be reached
 */
export async function openCommandStore(
  command: StoreCommand,
  context: { args: ParsedArgs; config: Readonly<Config>; deps: CliDeps },
): Promise<Store> {
  const { args, config, deps } = context;
  const creates = typeof command.createsDatabase === "function"
    ? command.createsDatabase(args)
    : command.createsDatabase === true;
  const url = config.databaseUrl;
  if (url === undefined) {
    if (!creates && config.dbPath !== ":memory:" && !(await deps.fileExists(config.dbPath))) {
      throw new UsageError(
        `no database at ${config.dbPath}: check --db or FIELDGATE_DB (serve, users add, import doorkeeper and an authorization_code clients add create one; a client_credentials client needs its integration user there first)`,
      );
    }
    return deps.openStore(config.dbPath, command.storeOptions);
  }
  const where = await describeUrl(url);
  try {
    if (!creates && !(await holdsFieldgate(url, config))) {
      throw new UsageError(
        `no fieldgate database at ${where}: check --db or FIELDGATE_DATABASE_URL, or create its tables with \`fieldgate migrate\` (serve, users add, import doorkeeper and an authorization_code clients add do too)`,
      );
    }
    return await deps.openStore(url, { ...command.storeOptions, ...poolOptions(config) });
  } catch (error) {
    if (isUnreachable(error)) throw new CommandError(`cannot open ${where}: ${messageOf(error)}`, { cause: error });
    throw error;
  }
}

/** True when the database has fieldgate's schema_migrations table; asked on a connection of its own, then closed. */
async function holdsFieldgate(url: string, config: Readonly<Config>): Promise<boolean> {
  const { openPostgres } = await import("../store/postgres/connect.ts");
  const pg = await openPostgres(url, { ...poolOptions(config), max: 1 });
  try {
    const [row] = await pg.query<{ present: boolean }>(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
    );
    return row?.present === true;
  } finally {
    await pg.close();
  }
}
