/**
 * Real PostgreSQL for tests: one throwaway cluster per test process, started on first use and removed at exit, and a
 * fresh database per test, so files running in parallel never see each other's rows.
 *
 * Where the server comes from, first match wins: FIELDGATE_TEST_DATABASE_URL (a running server whose user may create
 * databases), FIELDGATE_TEST_PG_BIN (a directory with initdb and pg_ctl; a directory without them counts as
 * "not installed", which is how a test run hides PostgreSQL), initdb on PATH, /usr/lib/postgresql/<version>/bin.
 * Without any: the tests are skipped and one note says so and how to enable them; under CI=true they fail instead.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import { promisify } from "node:util";
import type { TestContext } from "node:test";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { test } from "./bounded.ts";

const run = promisify(execFile);

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
  const candidates = env.FIELDGATE_TEST_PG_BIN !== undefined
    ? [env.FIELDGATE_TEST_PG_BIN]
    : [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...debianBinDirs()];
  const dir = candidates.find((c) => existsSync(join(c, "initdb")) && existsSync(join(c, "pg_ctl")));
  return dir ? { kind: "binaries", dir } : { kind: "missing", note: MISSING_NOTE };
}

/** Debian's versioned directories (initdb is not on PATH there), newest first. */
function debianBinDirs(): string[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root).sort((a, b) => Number(b) - Number(a)).map((version) => join(root, version, "bin"));
}

/** A database of its own for one test, created on a server this process reaches. */
export interface TestDatabase {
  url: string;
}

/**
 * `test()` for a test that needs PostgreSQL: `fn` gets a new, empty database. Skipped when PostgreSQL is missing
 * (failing under CI=true), with one note for the whole run.
 */
export function postgresTest(
  name: string,
  fn: (db: TestDatabase, t: TestContext) => Promise<void>,
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
    const db = await createTestDatabase(source);
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

/** A new database on the source's server; drop() removes it (a no-op on the throwaway cluster, which goes whole). */
export async function createTestDatabase(
  source: Exclude<PostgresSource, { kind: "missing" }>,
): Promise<TestDatabase & { drop(): Promise<void> }> {
  const adminUrl = source.kind === "url" ? source.url : (await cluster(source.dir)).url;
  const name = `fieldgate_test_${process.pid}_${++databaseCount}_${Math.random().toString(36).slice(2, 8)}`;
  // CREATE DATABASE takes no parameters; the name is built above from digits, letters and underscores only.
  await withAdmin(adminUrl, (admin) => admin.exec(`CREATE DATABASE "${name}"`));
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

function cluster(binDir: string): Promise<{ url: string }> {
  started ??= startCluster(binDir);
  return started;
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program from `binDir`; as root through runuser, since initdb and postgres refuse root. */
function pgCommand(binDir: string, program: string, args: string[]): [string, string[]] {
  const path = join(binDir, program);
  return asRoot ? ["runuser", ["-u", "postgres", "--", path, ...args]] : [path, args];
}

async function startCluster(binDir: string): Promise<{ url: string }> {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const [uid, gid] = ["-u", "-g"].map((flag) =>
      Number(spawnSync("id", [flag, "postgres"]).stdout.toString())
    );
    chownSync(dir, uid!, gid!);
  }
  const stop = () => {
    const [command, args] = pgCommand(binDir, "pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
    if (existsSync(join(data, "postmaster.pid"))) spawnSync(command, args, { cwd: dir, stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  stopAtExit(stop);
  watchForKill(binDir, dir, data);
  const exec = (program: string, args: string[]) => {
    const [command, argv] = pgCommand(binDir, program, args);
    return run(command, argv, { cwd: dir });
  };
  // trust: only this machine's 127.0.0.1 and the socket in the private temp directory reach it, for one test run.
  await exec("initdb", [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
  ]);
  for (let attempt = 1;; attempt++) {
    const port = await freePort();
    // No durability needed for a cluster that is deleted at exit; a short deadlock_timeout makes deadlock tests quick.
    const settings =
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off ` +
      "-c deadlock_timeout=50ms";
    try {
      await exec("pg_ctl", ["start", "-D", data, "-l", join(dir, "log"), "-w", "-t", "30", "-o", settings]);
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres` };
    } catch (error) {
      // Another process may have taken the port between freePort() and the server's bind: try another one.
      if (attempt >= 3) {
        const log = existsSync(join(dir, "log")) ? readFileSync(join(dir, "log"), "utf8") : "";
        throw new Error(`cannot start the test PostgreSQL cluster in ${dir}: ${log}`, { cause: error });
      }
    }
  }
}

/** A port that was free a moment ago, from the kernel. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(
        () => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))),
      );
    });
  });
}

/** Runs `stop` once when the process exits normally (Node's "exit" and Deno's "unload" both fire it). */
function stopAtExit(stop: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    stop();
  };
  process.on("exit", once);
  globalThis.addEventListener?.("unload", once);
}

/**
 * A detached shell that stops the cluster when this process is gone however it went (a test runner's timeout kill,
 * SIGKILL), when no exit hook runs: no postgres process may outlive the test run.
 */
function watchForKill(binDir: string, dir: string, data: string): void {
  const [command, args] = pgCommand(binDir, "pg_ctl", ["stop", "-D", data, "-m", "immediate"]);
  const quoted = [command, ...args].map((a) => `'${a}'`).join(" ");
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ` +
    `[ -f '${data}/postmaster.pid' ] && ${quoted} >/dev/null 2>&1; rm -rf '${dir}'`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
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
