// A CLI under test: runCli with recorded io, Node runtime services over a temp directory, fake clock and random.
import { mkdtempSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { DatabaseSync } from "node:sqlite";
import { runCli } from "../../src/cli/main.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { CliDeps } from "../../src/cli/types.ts";
import { createNodeDeps } from "../../src/adapters/serve_node.ts";
import { fakeClock, seededRandom, type FakeClock } from "../helpers/fake_clock.ts";
import type { LogLine } from "../helpers/test_app.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliHarness {
  dir: string;
  dbPath: string;
  clock: FakeClock;
  log: LogLine[];
  /** Runs one command against this harness's database (--db added unless given, or `env` names a database). */
  run(args: string[], options?: { stdin?: string; env?: Record<string, string>; tty?: boolean }): Promise<CliRun>;
  /** Runs and parses stdout as the one JSON object --json promises; fails when the command failed. */
  json(args: string[], options?: { stdin?: string }): Promise<Record<string, unknown>>;
  /** Every row of every table, or "absent": two equal snapshots mean nothing was written. */
  snapshot(): string;
  /** Reads rows straight from the database file. */
  query(sql: string, ...params: (string | number)[]): Record<string, unknown>[];
  /** Writes a file into the temp directory and returns its path. */
  file(name: string, content: string): string;
  /** Runtime services, for tests that swap listen/shutdownSignal. */
  deps(overrides?: Partial<CliDeps>): CliDeps;
  /** Creates the (migrated, empty) database, as serve would: most commands refuse a path with none. */
  createDatabase(): void;
}

/** Fast PBKDF2 so password commands do not take 140 ms each. */
export const CLI_TEST_ENV = { FIELDGATE_PBKDF2_ITERATIONS: "1000" };

/** This test process's harness directories, removed when it exits. Test code: process-wide state is fine. */
const harnessDirs: string[] = [];

function harnessDir(): string {
  if (harnessDirs.length === 0) {
    const removeAll = () => {
      for (const dir of harnessDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    };
    process.once("exit", removeAll);
    // Deno's test runner ends without node:process's exit event; its global unload event fires instead.
    globalThis.addEventListener?.("unload", removeAll);
  }
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-cli-"));
  harnessDirs.push(dir);
  return dir;
}

/** A fresh temp directory and database path for one test; the directory is removed when the test process exits. */
export function cliHarness(): CliHarness {
  const dir = harnessDir();
  const dbPath = join(dir, "fieldgate.db");
  const clock = fakeClock();
  const random = seededRandom(Math.floor(Math.random() * 2 ** 31) + 1);
  const log: LogLine[] = [];
  const deps = (overrides: Partial<CliDeps> = {}) =>
    createNodeDeps({ ...CLI_TEST_ENV }, {
      clock: clock.clock,
      random,
      log: (event, fields = {}) => log.push({ event, fields }),
      ...overrides,
    });
  const harness: CliHarness = {
    dir,
    dbPath,
    clock,
    log,
    deps,
    async run(args, { stdin = "", env = {}, tty = false } = {}) {
      let stdout = "";
      let stderr = "";
      const io = {
        stdout: (text: string) => void (stdout += text),
        stderr: (text: string) => void (stderr += text),
        readStdin: async () => stdin,
        isTTY: tty,
      };
      const withDb = args.includes("--db") || env.FIELDGATE_DB || env.FIELDGATE_DATABASE_URL ? args : [...args, "--db", dbPath];
      const runDeps = deps();
      runDeps.env = { ...runDeps.env, ...env };
      const code = await runCli(withDb, io, runDeps);
      return { code, stdout, stderr };
    },
    async json(args, options) {
      const result = await harness.run([...args, "--json"], options);
      if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    },
    snapshot() {
      if (!existsSync(dbPath)) return "absent";
      const db = new DatabaseSync(dbPath);
      try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
        return JSON.stringify(tables.map((t) => [t.name, db.prepare(`SELECT * FROM "${String(t.name)}"`).all()]));
      } finally {
        db.close();
      }
    },
    query(sql, ...params) {
      const db = new DatabaseSync(dbPath);
      try {
        return db.prepare(sql).all(...params) as Record<string, unknown>[];
      } finally {
        db.close();
      }
    },
    createDatabase() {
      openStore(dbPath).close();
    },
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
  };
  return harness;
}

/** A GeoJSON FeatureCollection of `n` 0.01° squares near 52°N, or with the given features. */
export function squares(n: number, properties: Record<string, unknown> = {}): string {
  const features = Array.from({ length: n }, (_, i) => {
    const x = 5 + i * 0.02;
    return {
      type: "Feature",
      properties: { name: `Field ${i + 1}`, ...properties },
      geometry: { type: "Polygon", coordinates: [[[x, 52], [x + 0.01, 52], [x + 0.01, 52.01], [x, 52.01], [x, 52]]] },
    };
  });
  return JSON.stringify({ type: "FeatureCollection", features });
}

/** Creates alice (person) and robot (integration) in org acme: the state most client commands need. */
export async function setupOrg(h: CliHarness): Promise<void> {
  const alice = await h.run(["users", "add", "--username", "alice@example.com", "--password-stdin", "--org", "acme"], {
    stdin: "correct horse battery\n",
  });
  const robot = await h.run(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme"]);
  if (alice.code !== 0 || robot.code !== 0) throw new Error(`setup failed: ${alice.stderr}${robot.stderr}`);
}
