// A machine without PostgreSQL: a run of several files that need it says once that their tests did not run and how to
// enable them, and passes, unless CI=true.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HELPER = new URL("../helpers/postgres.ts", import.meta.url).href;
const NOTE = "PostgreSQL tests did not run: no PostgreSQL found. To run them, install it (apt-get install postgresql)";
/** node --test gives each file a process of its own, so three files are three chances to repeat the note. */
const FILES = 3;

/** Runs FILES test files of two PostgreSQL tests each under this runtime's own test runner, with PostgreSQL hidden. */
async function runWithoutPostgres(env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-nopg-"));
  try {
    // A directory without initdb and pg_ctl counts as "not installed" (test/helpers/postgres.ts).
    const bin = join(dir, "bin");
    mkdirSync(bin);
    const files = Array.from({ length: FILES }, (_, i) => {
      const file = join(dir, `needs_postgres_${i}.test.mts`);
      writeFileSync(file, `import { postgresTest } from ${JSON.stringify(HELPER)};
postgresTest("file ${i} first", async () => {});
postgresTest("file ${i} second", async () => {});
`);
      return file;
    });
    const args = "Deno" in globalThis ? ["test", "--allow-all", "--no-check", ...files] : ["--test", ...files];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      // NODE_TEST_CONTEXT would make the child node:test treat itself as nested in this run, and run nothing.
      env: {
        ...process.env,
        NODE_TEST_CONTEXT: undefined,
        NO_COLOR: "1",
        FIELDGATE_TEST_PG_BIN: bin,
        FIELDGATE_TEST_DATABASE_URL: undefined,
        ...env,
      },
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    // The bound of the run, not a speed claim: it takes a second or two, and a hung run must fail this test.
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    return await new Promise((resolve) => child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("without PostgreSQL a run of several files says once that their tests did not run, and passes", async () => {
  const { code, output } = await runWithoutPostgres({ CI: undefined });
  assert.equal(code, 0, output);
  assert.equal(output.split(NOTE).length - 1, 1, output);
  assert.match(output, /file 2 second/, "every file ran and reported its tests as skipped");
});

test("without PostgreSQL under CI=true every test that needs it fails, saying what is missing and how to enable it", async () => {
  const { code, output } = await runWithoutPostgres({ CI: "true" });
  assert.notEqual(code, 0, output);
  assert.match(output, /PostgreSQL is required under CI=true/);
  assert.ok(output.includes(NOTE), output);
});
