// Deno adapter smoke test: spawns `deno run src/adapters/deno.ts serve`, waits for /healthz, then SIGTERM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

test("serve on Deno seeds, answers /healthz and exits 0 on SIGTERM", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-"));
  // A shell in between reports deno's own exit status: Deno's node:child_process reports a signalled child's
  // code as null, which would hide whether the server exited 0 after its graceful shutdown.
  const script = 'node_modules/.bin/deno run --allow-all --no-check src/adapters/deno.ts serve --host 127.0.0.1 --port 0 --db "$1" & ' +
    'echo "pid=$!" >&2; wait $!; echo "exit=$?" >&2';
  const child = spawn("sh", ["-c", script, "sh", join(dir, "fg.db")], {
    cwd: ROOT,
    env: { ...process.env, FIELDGATE_PBKDF2_ITERATIONS: "1000", NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const match = /"event":"listening","url":"([^"]+)"/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.on("exit", () => reject(new Error(`deno exited early: ${stderr}`)));
  });
  try {
    const res = await fetch(`${url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: "ok" });
  } finally {
    process.kill(Number(/pid=(\d+)/.exec(stderr)![1]), "SIGTERM");
  }
  await exited;
  assert.match(stderr, /exit=0/, stderr);
  assert.match(stderr, /"event":"stopped"/);
  assert.match(stdout, /fieldgate demo data created/);
  const credentials = join(dir, "demo-credentials.json");
  assert.ok(existsSync(credentials));
  assert.equal(statSync(credentials).mode & 0o777, 0o600);
});

// deno.json's tasks are how Deno users run fieldgate. Deno's task runner resolves a bare `deno` to
// node_modules/.bin/deno (the pinned binary) and would try to run that binary as JavaScript, so the tasks name
// the path; this runs one through `deno task` to keep them working.
test("deno task cli runs the CLI through deno.json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-task-"));
  const child = spawn("node_modules/.bin/deno", ["task", "cli", "users", "list", "--json", "--db", join(dir, "t.db")], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { users: [] });
});
