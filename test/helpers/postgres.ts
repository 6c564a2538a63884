/**
 * Real PostgreSQL for tests: one throwaway cluster per test process, started on first use and removed at exit, and a
 * fresh database per test, so files running in parallel never see each other's rows.
 *
 * Where the server comes from, first match wins: FIELDGATE_TEST_DATABASE_URL (a running server whose user may create
 * databases), FIELDGATE_TEST_PG_BIN (a directory with initdb and pg_ctl; a directory without them counts as
 * "not installed", which is how a test run hides PostgreSQL), initdb on PATH, /usr/lib/postgresql/<version>/bin.
 * Without any: the tests are skipped and one note says so and how to enable them; under CI=true they fail instead.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { TestContext } from "node:test";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { migratePostgres, PG_MIGRATIONS } from "../../src/store/postgres/migrations.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { findPostgresBinaries, startPostgresCluster } from "../../scripts/lib/postgres_cluster.ts";
import { test } from "./bounded.ts";

/** Where the tests' PostgreSQL comes from, or why there is none. */
export type PostgresSource =
  | { kind: "url"; url: string }
  | { kind: "binaries"; dir: string }
  | { kind: "missing"; note: string };

/** What to do about it, said once per test run when PostgreSQL is missing. */
const MISSING_NOTE = "PostgreSQL tests did not run: no PostgreSQL found. To run them, install it " +
  "(apt-get install postgresql), point FIELDGATE_TEST_PG_BIN at a directory with initdb and pg_ctl, or set " +
  "FIELDGATE_TEST_DATABASE_URL to a server whose user may create databases. Under CI=true this is a failure.";

/** Finds the tests' PostgreSQL from `env` and the file system; starts nothing. */
export function findPostgres(env: Record<string, string | undefined> = process.env): PostgresSource {
  if (env.FIELDGATE_TEST_DATABASE_URL) return { kind: "url", url: env.FIELDGATE_TEST_DATABASE_URL };
  const dir = findPostgresBinaries(env);
  return dir ? { kind: "binaries", dir } : { kind: "missing", note: MISSING_NOTE };
}

/** A database of its own for one test, created on a server this process reaches. */
export interface TestDatabase {
  url: string;
}

/**
 * `test()` for a test that needs PostgreSQL: `fn` gets a new database, empty or, with `migrated`, at the current
 * migrations. Skipped when PostgreSQL is missing (failing under CI=true), with one note for the whole run.
 */
export function postgresTest(
  name: string,
  fn: (db: TestDatabase, t: TestContext) => Promise<void>,
  options: { migrated?: boolean } = {},
): Promise<void> {
  const source = findPostgres();
  if (source.kind === "missing") {
    if (process.env.CI === "true") {
      return test(name, () => {
        throw new Error(`PostgreSQL is required under CI=true. ${source.note}`);
      });
    }
    noteOnce(source.note);
    return test(name, { skip: "no PostgreSQL" }, () => {});
  }
  return test(name, async (t) => {
    const db = await createTestDatabase(source, options);
    try {
      await fn(db, t);
    } finally {
      await db.drop();
    }
  });
}

/** The tests' PostgreSQL for a run that asked for it: a missing one throws, with the note on how to get one. */
export function requirePostgres(): Exclude<PostgresSource, { kind: "missing" }> {
  const source = findPostgres();
  if (source.kind === "missing") throw new Error(`FIELDGATE_TEST_STORE=postgres: ${source.note}`);
  return source;
}

/**
 * A new database on the source's server; drop() removes it (a no-op on the throwaway cluster, which goes whole).
 * `migrated`: a copy of a database at the current PG_MIGRATIONS, which openPostgresStore then finds up to date;
 * otherwise empty.
 */
export async function createTestDatabase(
  source: Exclude<PostgresSource, { kind: "missing" }>,
  options: { migrated?: boolean } = {},
): Promise<TestDatabase & { drop(): Promise<void> }> {
  const adminUrl = source.kind === "url" ? source.url : (await cluster(source.dir)).url;
  const name = `fieldgate_test_${process.pid}_${++databaseCount}_${Math.random().toString(36).slice(2, 8)}`;
  const template = options.migrated ? ` TEMPLATE "${await migratedTemplate(adminUrl)}"` : "";
  // CREATE DATABASE takes no parameters; the names are built from digits, letters and underscores only.
  await withAdmin(adminUrl, (admin) => admin.exec(`CREATE DATABASE "${name}"${template}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: source.kind === "url"
      ? () => withAdmin(adminUrl, (admin) => admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
      : async () => {},
  };
}

let databaseCount = 0;

/** This process's migrated template per server. Test code: a cache is fine. */
const templates = new Map<string, Promise<string>>();

/**
 * The name of a database on the server at `adminUrl` migrated to the current PG_MIGRATIONS, marked IS_TEMPLATE once
 * complete, for CREATE DATABASE … TEMPLATE: a copy costs a fraction of migrating each test's database. The name
 * carries a digest of the migrations, so a server kept between runs never serves an outdated schema; test processes
 * sharing a server build it once, under an advisory lock.
 */
function migratedTemplate(adminUrl: string): Promise<string> {
  let template = templates.get(adminUrl);
  if (!template) {
    template = buildTemplate(adminUrl);
    templates.set(adminUrl, template);
  }
  return template;
}

async function buildTemplate(adminUrl: string): Promise<string> {
  const digest = await sha256Hex(PG_MIGRATIONS.map((m) => `${m.name}\n${m.sql}`).join("\n"));
  const name = `fieldgate_template_${digest.slice(0, 16)}`;
  const admin = await openPostgres(adminUrl, { max: 1, statementTimeoutMs: 0, lockTimeoutMs: 0 });
  try {
    // Session-level, on the admin pool's one connection: other processes wait here while one migrates. The key is
    // the migrations' lock key plus one, so it never queues behind a test that migrates.
    await admin.query("SELECT pg_advisory_lock(1718054250)");
    const [row] = await admin.query<{ ready: boolean }>("SELECT datistemplate AS ready FROM pg_database WHERE datname = $1", [name]);
    if (row?.ready) return name;
    // A database of that name that is not marked was left by a run killed while migrating it.
    await admin.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.exec(`CREATE DATABASE "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const pg = await openPostgres(url.href, { max: 1 });
    try {
      await migratePostgres(pg);
    } finally {
      await pg.close();
    }
    await admin.exec(`ALTER DATABASE "${name}" IS_TEMPLATE true`);
    return name;
  } finally {
    await admin.close(); // ends the session, and with it the advisory lock
  }
}

async function withAdmin(
  url: string,
  fn: (admin: Awaited<ReturnType<typeof openPostgres>>) => Promise<void>,
) {
  // One short-lived connection: a pooled one left open would keep the test process alive after its last test.
  const admin = await openPostgres(url, { max: 1 });
  try {
    await fn(admin);
  } finally {
    await admin.close();
  }
}

/** The one cluster of this test process, started by the first test that needs it. Test code: a singleton is fine. */
let started: Promise<{ url: string }> | undefined;

/**
 * This process's throwaway cluster; also for a runner that hands one server to many test processes through
 * FIELDGATE_TEST_DATABASE_URL (scripts/test_postgres.ts). It stops when this process exits.
 */
export function cluster(binDir: string): Promise<{ url: string }> {
  // No durability needed for a cluster that is deleted at exit; a short deadlock_timeout makes deadlock tests quick.
  started ??= startPostgresCluster(binDir, {
    settings: { fsync: "off", full_page_writes: "off", deadlock_timeout: "50ms" },
    purpose: "test",
  });
  return started;
}

/**
 * Prints `note` once per test run. node --test gives each file a process of its own, whose parent is the runner;
 * Deno runs each file in a fresh module instance of one process. A marker named after the run's process (pid and
 * start time, which no later process repeats) tells the later files; a few bytes left in the temp directory.
 */
function noteOnce(note: string): void {
  const run = runIdentity();
  if (run) {
    const marker = join(tmpdir(), `fieldgate-pg-note-${run}`);
    try {
      writeFileSync(marker, "", { flag: "wx" });
    } catch (error) {
      if ((error as { code?: unknown }).code === "EEXIST") return; // another file of this run has printed it
      throw error;
    }
  }
  process.stderr.write(`\n${note}\n\n`);
}

/** The test run's process as pid plus start time (Linux /proc); undefined elsewhere, where every file prints. */
function runIdentity(): string | undefined {
  const pid = process.env.NODE_TEST_CONTEXT === undefined ? process.pid : process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return `${pid}-${startTime}`;
  } catch {
    return undefined; // no /proc (macOS): the note repeats per file, which is noise, not harm
  }
}
