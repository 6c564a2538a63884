// scripts/run_tests.ts: the command it runs gets one PostgreSQL cluster for all its files and Node's compile cache,
// and exits as the command did; the cluster is gone afterwards.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { findPostgres } from "../helpers/postgres.ts";
import { requireComponent } from "../helpers/system_component.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NODE = join(ROOT, "node_modules/.bin/node");
const CONNECT = new URL("../../src/store/postgres/connect.ts", import.meta.url).href;

/** Runs `node scripts/run_tests.ts node -e <script>` with `env` over this process's; the script exits with 3. */
async function runTests(env: Record<string, string | undefined>, script: string) {
  // spawn, not spawnSync: Deno's spawnSync keeps an inherited variable given as undefined, spawn removes it.
  const child = spawn(NODE, ["scripts/run_tests.ts", NODE, "--input-type=module", "-e", `${script}\nprocess.exit(3);`], {
    cwd: ROOT,
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...env },
  });
  let [stdout, stderr] = ["", ""];
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  // The bound of the run, not a speed claim: a hung run must fail this test.
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const [status] = await once(child, "close") as [number | null];
  clearTimeout(timer);
  return { status, stderr, seen: JSON.parse(stdout.trim() || "{}") };
}

const SHOW_ENV = "console.log(JSON.stringify({ url: process.env.FIELDGATE_TEST_DATABASE_URL ?? null, " +
  "cache: process.env.NODE_COMPILE_CACHE ?? null, jobs: process.env.DENO_JOBS ?? null }));";

const binaries = requireComponent(
  "PostgreSQL",
  () => findPostgres({ ...process.env, FIELDGATE_TEST_DATABASE_URL: undefined }).kind === "binaries" || undefined,
  "apt-get install postgresql",
);

if (binaries) {
  test("the command gets one running cluster's URL and the compile cache, its exit status is kept, and the cluster stops after", async () => {
    // An ordinary run: under c8 (npm run coverage sets NODE_V8_COVERAGE) run_tests.ts leaves the cache off by design.
    const env = { FIELDGATE_TEST_DATABASE_URL: undefined, NODE_COMPILE_CACHE: undefined, NODE_V8_COVERAGE: undefined };
    const { status, stderr, seen } = await runTests(env, `
      import { openPostgres } from ${JSON.stringify(CONNECT)};
      const pg = await openPostgres(process.env.FIELDGATE_TEST_DATABASE_URL, { max: 1 });
      const [row] = await pg.query("SELECT 1 AS one");
      await pg.close();
      console.log(JSON.stringify({ one: row.one, url: process.env.FIELDGATE_TEST_DATABASE_URL, cache: process.env.NODE_COMPILE_CACHE }));
    `);
    assert.equal(status, 3, stderr);
    assert.equal(seen.one, 1);
    assert.match(seen.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    assert.equal(seen.cache, join(tmpdir(), "node-compile-cache"));
    const { openPostgres } = await import("../../src/store/postgres/connect.ts");
    await assert.rejects(async () => {
      const pg = await openPostgres(seen.url, { max: 1, connectTimeoutSeconds: 5 });
      try {
        await pg.query("SELECT 1");
      } finally {
        await pg.close({ timeoutSeconds: 0 });
      }
    }, /ECONNREFUSED/);
  });
}

test("deno test --parallel gets four jobs unless DENO_JOBS is set", async () => {
  const url = "postgres://fg@127.0.0.1:1/given";
  const { status, stderr, seen } = await runTests({ FIELDGATE_TEST_DATABASE_URL: url, DENO_JOBS: undefined }, SHOW_ENV);
  assert.equal(status, 3, stderr);
  assert.equal(seen.jobs, "4");
});

test("a URL already given is passed on as it is, and so is a compile cache or a job count already chosen", async () => {
  const url = "postgres://fg@127.0.0.1:1/given";
  const env = { FIELDGATE_TEST_DATABASE_URL: url, NODE_COMPILE_CACHE: "/tmp/chosen", DENO_JOBS: "3" };
  const { status, stderr, seen } = await runTests(env, SHOW_ENV);
  assert.equal(status, 3, stderr);
  assert.deepEqual(seen, { url, cache: "/tmp/chosen", jobs: "3" });
});

test("under c8 (NODE_V8_COVERAGE set) no compile cache is chosen, since cached functions lose their branch counts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-v8cov-"));
  try {
    const env = { NODE_V8_COVERAGE: dir, NODE_COMPILE_CACHE: undefined, FIELDGATE_TEST_DATABASE_URL: "postgres://fg@127.0.0.1:1/given" };
    const { status, stderr, seen } = await runTests(env, SHOW_ENV);
    assert.equal(status, 3, stderr);
    assert.equal(seen.cache, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without PostgreSQL the command runs without a URL, and its tests say what they lack as they always do", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-nopg-"));
  try {
    const { status, stderr, seen } = await runTests({ FIELDGATE_TEST_PG_BIN: dir, FIELDGATE_TEST_DATABASE_URL: undefined }, SHOW_ENV);
    assert.equal(status, 3, stderr);
    assert.equal(seen.url, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
