// The database a command works on: a SQLite file (FIELDGATE_DB) or PostgreSQL (FIELDGATE_DATABASE_URL), named safely.
import { type Config, isPostgresUrl } from "../config.ts";
import type { PgOptions } from "../store/postgres/connect.ts";
import { openStore } from "../store/sqlite/store.ts";
import type { Store } from "../store/contract.ts";
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
  const storeOptions = command.logsMigrations
    ? { ...command.storeOptions, onMigrated: (applied: readonly string[]) => logMigrated(deps, applied) }
    : command.storeOptions;
  if (url === undefined) {
    if (!creates && config.dbPath !== ":memory:" && !(await deps.fileExists(config.dbPath))) {
      throw new UsageError(
        `no database at ${config.dbPath}: check --db or FIELDGATE_DB (serve, users add, import doorkeeper and an authorization_code clients add create one; a client_credentials client needs its integration user there first)`,
      );
    }
    return deps.openStore(config.dbPath, storeOptions);
  }
  const where = await describeUrl(url);
  try {
    if (!creates && !(await holdsFieldgate(url, config))) {
      throw new UsageError(
        `no fieldgate database at ${where}: check --db or FIELDGATE_DATABASE_URL, or create its tables with \`fieldgate migrate\` (serve, users add, import doorkeeper and an authorization_code clients add do too)`,
      );
    }
    return await deps.openStore(url, { ...storeOptions, ...poolOptions(config) });
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

function logMigrated(deps: CliDeps, applied: readonly string[]): void {
  if (applied.length > 0) deps.log("migrated", { applied: [...applied] });
}

/** What a PostgreSQL role may open: the server's slots less those reserved for others, and its own limit. */
export interface ConnectionRoom {
  /** Connections this role may hold at once on the server. */
  usable: number;
  /** The pool each process opens (FIELDGATE_DATABASE_POOL). */
  pool: number;
}

/** Connections left for the operator's psql, pg_dump and CLI beside the instances' pools. */
const OPERATOR_CONNECTIONS = 3;

/**
 * How many connections the configured role may hold (max_connections less superuser_reserved_connections and, from
 * PostgreSQL 16, reserved_connections, unless it is a superuser; at most its CONNECTION LIMIT), asked on a
 * connection of its own; undefined when the server does not say (a pooler in front).
 */
export async function connectionRoom(url: string, config: Readonly<Config>): Promise<ConnectionRoom | undefined> {
  const { openPostgres } = await import("../store/postgres/connect.ts");
  const pg = await openPostgres(url, { ...poolOptions(config), max: 1 });
  try {
    const [row] = await pg.query<{ usable: number | null }>(
      `SELECT CASE WHEN r.rolconnlimit >= 0 THEN LEAST(r.rolconnlimit, m.usable) ELSE m.usable END AS usable
         FROM pg_roles r,
              LATERAL (SELECT CASE WHEN r.rolsuper THEN current_setting('max_connections')::int
                                   ELSE current_setting('max_connections')::int
                                        - current_setting('superuser_reserved_connections')::int
                                        - COALESCE(NULLIF(current_setting('reserved_connections', true), ''), '0')::int
                              END AS usable) m
        WHERE r.rolname = current_user`,
    );
    return typeof row?.usable === "number" ? { usable: row.usable, pool: config.databasePool } : undefined;
  } finally {
    await pg.close();
  }
}

/**
 * The warning serve logs at start when the role's connections leave no room for a second instance beside this one
 * and the operator's tools; undefined when there is room.
 */
export function connectionWarning(room: ConnectionRoom): Record<string, number> | undefined {
  if (room.pool * 2 + OPERATOR_CONNECTIONS <= room.usable) return undefined;
  return {
    usable_connections: room.usable,
    pool: room.pool,
    instances_that_fit: Math.max(0, Math.floor((room.usable - OPERATOR_CONNECTIONS) / room.pool)),
  };
}
