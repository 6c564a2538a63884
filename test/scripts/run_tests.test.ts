// scripts/run_tests.ts: the command it runs gets one PostgreSQL cluster for all its files and Node's compile cache,
// and exits as the command did; the cluster is gone afterwards.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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
function runTests(env: Record<string, string | undefined>, script: string) {
  const child = spawnSync(NODE, ["scripts/run_tests.ts", NODE, "--input-type=module", "-e", `${script}\nprocess.exit(3);`], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...env },
    timeout: 60_000,
  });
  return { status: child.status, stderr: child.stderr, seen: JSON.parse(child.stdout.trim() || "{}") };
}

const SHOW_ENV = "console.log(JSON.stringify({ url: process.env.FIELDGATE_TEST_DATABASE_URL ?? null, " +
  "cache: process.env.NODE_COMPILE_CACHE ?? null }));";

const binaries = requireComponent(
  "PostgreSQL",
  () => findPostgres({ ...process.env, FIELDGATE_TEST_DATABASE_URL: undefined }).kind === "binaries" || undefined,
  "apt-get install postgresql",
);

if (binaries) {
  test("the command gets one running cluster's URL and the compile cache, its exit status is kept, and the cluster stops after", async () => {
    const { status, stderr, seen } = runTests({ FIELDGATE_TEST_DATABASE_URL: undefined, NODE_COMPILE_CACHE: undefined }, `
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

test("a URL already given is passed on as it is, and so is a compile cache already chosen", () => {
  const url = "postgres://fg@127.0.0.1:1/given";
  const { status, stderr, seen } = runTests({ FIELDGATE_TEST_DATABASE_URL: url, NODE_COMPILE_CACHE: "/tmp/chosen" }, SHOW_ENV);
  assert.equal(status, 3, stderr);
  assert.deepEqual(seen, { url, cache: "/tmp/chosen" });
});

test("under c8 (NODE_V8_COVERAGE set) no compile cache is chosen, since cached functions lose their branch counts", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-v8cov-"));
  try {
    const env = { NODE_V8_COVERAGE: dir, NODE_COMPILE_CACHE: undefined, FIELDGATE_TEST_DATABASE_URL: "postgres://fg@127.0.0.1:1/given" };
    const { status, stderr, seen } = runTests(env, SHOW_ENV);
    assert.equal(status, 3, stderr);
    assert.equal(seen.cache, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without PostgreSQL the command runs without a URL, and its tests say what they lack as they always do", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-nopg-"));
  try {
    const { status, stderr, seen } = runTests({ FIELDGATE_TEST_PG_BIN: dir, FIELDGATE_TEST_DATABASE_URL: undefined }, SHOW_ENV);
    assert.equal(status, 3, stderr);
    assert.equal(seen.url, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
