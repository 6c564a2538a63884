// `serve --workers 2` as a real process tree: two workers share one port and the database, SIGTERM stops all with 0.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli/main.ts";
import { cliHarness } from "../cli/harness.ts";

const NODE = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
const ENTRY = fileURLToPath(new URL("../../src/adapters/node.ts", import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `node src/adapters/node.ts serve …` as a child process, with its stdout and stderr (the JSON log) captured. */
function spawnServe(args: string[], env: Record<string, string>) {
  const child = spawn(NODE, [ENTRY, "serve", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const output = { log: "", out: "" };
  child.stderr!.on("data", (chunk: Buffer) => (output.log += chunk.toString("utf8")));
  child.stdout!.on("data", (chunk: Buffer) => (output.out += chunk.toString("utf8")));
  const exited = new Promise<string>((resolve) => child.on("exit", (code, signal) => resolve(`${code} ${signal}`)));
  return { child, output, exited };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

test("serve --workers 2 answers from two worker processes on one port and exits 0 on SIGTERM", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-workers-"));
  const port = await freePort();
  const { child, output, exited } = spawnServe(["--workers", "2", "--host", "127.0.0.1", "--port", String(port), "--db", join(dir, "db.sqlite")], {
    FIELDGATE_DEMO: "false",
  });
  try {
    while ((output.log.match(/"event":"listening"/g) ?? []).length < 2) await tick();
    const log = output.log;
    const statuses = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status)));
    assert.deepEqual(new Set(statuses), new Set([200]));
    // The primary seeded and forked; each worker listened on the same port.
    assert.match(log, /"event":"starting_workers","workers":2/);
    const urls = [...log.matchAll(/"event":"listening","url":"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(urls, [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}`]);
    // process.kill, not child.kill: Deno's child_process reports a child.kill()ed process as killed by that signal
    // even when it handled the signal and exited 0.
    process.kill(child.pid!, "SIGTERM");
    assert.equal(await exited, "0 null", output.log);
    assert.equal((output.log.match(/"event":"stopped"/g) ?? []).length, 2);
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("serve --workers 2 --port 0 shows the port the workers share in its banner and credentials file, not 0", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-workers-port0-"));
  const { child, output, exited } = spawnServe(["--workers", "2", "--host", "127.0.0.1", "--port", "0", "--db", join(dir, "db.sqlite")], {
    FIELDGATE_PBKDF2_ITERATIONS: "1000", FIELDGATE_BASE_URL: "", PORT: "",
  });
  try {
    while ((output.log.match(/"event":"listening"/g) ?? []).length < 2 || !output.out.includes("Sign in at")) await tick();
    const port = new URL([...output.log.matchAll(/"event":"listening","url":"([^"]+)"/g)][0]![1]!).port;
    assert.notEqual(port, "0");
    assert.match(output.out, new RegExp(`Sign in at http://localhost:${port}/ as:`));
    assert.match(output.out, new RegExp(`redirect_uri: +http://localhost:${port}/demo/callback`));
    const credentials = JSON.parse(readFileSync(join(dir, "db.sqlite.demo-credentials.json"), "utf8"));
    assert.equal(credentials.authorizationCodeClient.redirect_uri, `http://localhost:${port}/demo/callback`);
    process.kill(child.pid!, "SIGTERM");
    assert.equal(await exited, "0 null", output.log);
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("npm start runs serve with the heap settings docs/operations.md names, as deno task start does", () => {
  const flags = ["--max-semi-space-size=2", "--max-old-space-size=256"];
  const scripts = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).scripts;
  for (const flag of flags) assert.ok(scripts.start.split(" ").includes(flag), flag);
  const tasks = JSON.parse(readFileSync(new URL("../../deno.json", import.meta.url), "utf8")).tasks;
  assert.match(tasks.start, new RegExp(`--v8-flags=${flags.join(",")}`));
});

test("serve --workers 2 on a runtime without a worker pool is refused as a bad argument: exit 2, no database made", async () => {
  const h = cliHarness();
  let listened = false;
  const deps = h.deps({ workers: undefined, listen: async () => ((listened = true), { url: "http://x", close: async () => {} }) });
  let stderr = "";
  const io = { stdout: () => {}, stderr: (text: string) => void (stderr += text), readStdin: async () => "", isTTY: false };
  assert.equal(await runCli(["serve", "--workers", "2", "--port", "0", "--db", h.dbPath], io, deps), 2);
  assert.match(stderr, /--workers is not supported/);
  assert.equal(listened, false);
  // Refused before the store opens: no file created or migrated (on Deno it was, then refused with exit 1).
  assert.equal(existsSync(h.dbPath), false);
});
