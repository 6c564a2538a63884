// Deno adapter smoke test: spawns what `deno task start` runs, waits for /healthz, then SIGTERM.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { denoTaskArgs } from "../../scripts/lib/deno_tasks.ts";
import { assertRefusedUploadsAnswered } from "../helpers/oversized_upload.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { applicationsCsv, integrationUsersCsv, ownersCsv, tokensCsv } from "../helpers/doorkeeper_fixtures.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

test("serve on Deno seeds, answers /healthz and exits 0 on SIGTERM", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-"));
  const db = join(dir, "new", "fg.db");
  const server = await serveOnDeno(db);
  try {
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.deepEqual(JSON.parse(text), { status: "ok" });
    // Deno.serve writes `content-length: 0` for a body-less answer unless told the GET's length (RFC 9110 §8.6).
    const head = await rawExchange(server.url, "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.match(head, new RegExp(`\r\ncontent-length: ${text.length}\r\n`, "i"));
    // The database it created is private: its directory, the file, and the -wal and -shm SQLite derives from it.
    assert.equal(statSync(join(dir, "new")).mode & 0o777, 0o700);
    for (const file of [db, `${db}-wal`, `${db}-shm`]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
  } finally {
    assert.equal(await server.stop(), "exit=0");
  }
  assert.match(server.stderr(), /"event":"stopped"/);
  assert.match(server.stdout(), /fieldgate demo data created/);
  const credentials = join(dir, "new", "fg.db.demo-credentials.json");
  assert.ok(existsSync(credentials));
  assert.equal(statSync(credentials).mode & 0o777, 0o600);
});

// deno.json's tasks are how Deno users run fieldgate. Deno's task runner resolves a bare `deno` to
// node_modules/.bin/deno (the pinned binary) and would try to run that binary as JavaScript, so the tasks name
// the path; this runs one through `deno task` to keep them working.
test("deno task cli runs the CLI through deno.json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-task-"));
  const args = ["users", "add", "--username", "robot", "--integration", "--org", "acme", "--json", "--db", join(dir, "t.db")];
  const child = spawn("node_modules/.bin/deno", ["task", "cli", ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { id: 1, username: "robot", kind: "integration" });
});

/** Runs the CLI on Deno; resolves with its exit code and output. */
async function denoCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // What `deno task cli` runs (its permissions), with type checking left to `npm run typecheck`.
  const [run, ...rest] = denoTaskArgs(new URL("../../", import.meta.url), "cli");
  // Under the usual umask, so the files it creates show the modes it asks for.
  const child = spawn("/bin/sh", ["-c", 'umask 022; exec "$@"', "sh", "node_modules/.bin/deno", run, "--no-check", ...rest, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", FIELDGATE_PBKDF2_ITERATIONS: "1000" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  return { code, stdout, stderr };
}

test("backup on Deno creates a private copy once and never overwrites it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-backup-"));
  const db = join(dir, "fg.db");
  const copy = join(dir, "copy.db");
  assert.equal((await denoCli(["users", "add", "--username", "robot", "--integration", "--org", "acme", "--db", db])).code, 0);
  const first = await denoCli(["backup", copy, "--db", db]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(statSync(copy).mode & 0o777, 0o600);
  const size = statSync(copy).size;
  const again = await denoCli(["backup", copy, "--db", db]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already exists/);
  assert.equal(statSync(copy).size, size);
  // The database's own journal name, spelled through a symlinked directory, is still its own file.
  symlinkSync(dir, join(dir, "link"));
  const journal = await denoCli(["backup", join(dir, "link", "fg.db-journal"), "--db", db]);
  assert.equal(journal.code, 2, journal.stderr);
  assert.match(journal.stderr, /one of the database's own files/);
  assert.equal(existsSync(join(dir, "fg.db-journal")), false);
});

postgresTest("serve on Deno, with deno task start's permissions, starts on an empty PostgreSQL database", async (db) => {
  const server = await serveOnDeno(db.url, { env: { FIELDGATE_DEMO: "false" } });
  try {
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: "ok" });
  } finally {
    assert.equal(await server.stop(), "exit=0");
  }
  // The CLI on Deno opens the same database; backup, which copies a SQLite file, refuses it without writing a file.
  const copy = join(mkdtempSync(join(tmpdir(), "fieldgate-deno-pg-")), "copy.db");
  const backup = await denoCli(["backup", copy, "--db", db.url]);
  assert.equal(backup.code, 2, backup.stderr);
  assert.match(backup.stderr, /back up a PostgreSQL database with pg_dump/);
  assert.equal(existsSync(copy), false);
});

interface DenoServe {
  url: string;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit status line the shell reported. */
  stop(): Promise<string>;
  /** The exit status line, once the server ends on its own. */
  exited(): Promise<string>;
}

/**
 * `deno … serve --port 0` on `dbPath` with no base URL configured, once it logs that it is listening. A shell in
 * between reports deno's own exit status: Deno's node:child_process reports a signalled child's code as null, which
 * would hide whether the server exited 0 after its graceful shutdown.
 */
async function serveOnDeno(
  dbPath: string,
  options: { env?: Record<string, string>; maxOpenFiles?: number } = {},
): Promise<DenoServe> {
  // The usual umask, so what the server creates shows the modes it asks for.
  const limit = `umask 022; ${options.maxOpenFiles === undefined ? "" : `ulimit -n ${options.maxOpenFiles}; `}`;
  // What `deno task start` runs (its permission and V8 flags), with type checking left to `npm run typecheck`.
  const [run, ...rest] = denoTaskArgs(new URL("../../", import.meta.url), "start");
  const command = ["node_modules/.bin/deno", run, "--no-check", ...rest].join(" ");
  const script = `${limit}${command} --host 127.0.0.1 --port 0 --db "$1" & ` +
    'echo "pid=$!" >&2; wait $!; echo "exit=$?" >&2';
  const env: Record<string, string | undefined> = { ...process.env, FIELDGATE_PBKDF2_ITERATIONS: "1000", NO_COLOR: "1", ...options.env };
  delete env.FIELDGATE_BASE_URL;
  delete env.PORT;
  const child = spawn("sh", ["-c", script, "sh", dbPath], { cwd: ROOT, env });
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
  return {
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      process.kill(Number(/pid=(\d+)/.exec(stderr)![1]), "SIGTERM");
      await exited;
      return /exit=\d+/.exec(stderr)?.[0] ?? stderr;
    },
    async exited() {
      await exited;
      return /exit=\d+/.exec(stderr)?.[0] ?? stderr;
    },
  };
}

test("serve on Deno with port 0 names the bound port in the banner, the metadata and the demo's redirect URI", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-port0-"));
  const dbPath = join(dir, "fg.db");
  for (const run of ["first", "restart"]) {
    const server = await serveOnDeno(dbPath);
    try {
      const base = `http://localhost:${new URL(server.url).port}`;
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
      assert.equal(metadata.issuer, base, run);
      assert.equal(metadata.authorization_endpoint, `${base}/oauth/authorize`, run);
      if (run === "first") assert.match(server.stdout(), new RegExp(`Sign in at ${base}/`));
      // The restart binds another port: the demo's authorization request must still match the registration.
      const start = await fetch(`${server.url}/demo/start`, { redirect: "manual" });
      assert.equal(start.status, 302, run);
      const authorize = await fetch(new URL(start.headers.get("location")!, server.url), { redirect: "manual" });
      assert.equal(authorize.status, 200, `${run}: ${authorize.status}`);
      await authorize.body?.cancel();
    } finally {
      assert.equal(await server.stop(), "exit=0");
    }
  }
});

/** Sends raw bytes on a fresh connection and resolves with everything the server wrote before closing it. */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(bytes));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk));
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

test("serve on Deno refuses a Host header that would rewrite the path, and routes by the request line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-host-"));
  const server = await serveOnDeno(join(dir, "fg.db"));
  try {
    const tricked = await rawExchange(server.url, "GET /nope HTTP/1.1\r\nHost: x/healthz?\r\nConnection: close\r\n\r\n");
    assert.match(tricked, /^HTTP\/1\.1 400 /);
    // Hosts that leave no valid URL behind: 400 too, not a 500 from app.fetch's URL parse.
    for (const host of [":", "x:99999", "[zz]"]) {
      const answer = await rawExchange(server.url, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /, host);
    }
    assert.doesNotMatch(tricked, /"status":"ok"/);
    for (const host of ["my_service:8080", "example.com.", "[::1]:8080"]) {
      const plain = await rawExchange(server.url, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      assert.match(plain, /^HTTP\/1\.1 200 /, host);
    }
    // HTTP/1.0 without Host, as HAProxy's default health check sends it: nothing to rewrite, so served.
    assert.match(await rawExchange(server.url, "GET /healthz HTTP/1.0\r\n\r\n"), /^HTTP\/1\.[01] 200 /);
  } finally {
    assert.equal(await server.stop(), "exit=0");
  }
  assert.doesNotMatch(server.stderr(), /"path":"\/healthz","status":400/);
});

test("serve on Deno answers an oversized upload with its whole 413 and Connection: close while the client is still sending", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-upload-"));
  const server = await serveOnDeno(join(dir, "fg.db"));
  try {
    await assertRefusedUploadsAnswered(server.url);
  } finally {
    assert.equal(await server.stop(), "exit=0");
  }
});

test("serve on Deno shuts down within its grace even while a client never finishes its request", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-stuck-"));
  const server = await serveOnDeno(join(dir, "fg.db"), { env: { FIELDGATE_SHUTDOWN_GRACE: "1" } });
  const { port } = new URL(server.url);
  const stuck = connect(Number(port), "127.0.0.1");
  stuck.on("error", () => {});
  stuck.write("POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = Date.now();
  assert.equal(await server.stop(), "exit=0");
  assert.ok(Date.now() - started < 8_000, `stopped after ${Date.now() - started} ms`);
  assert.match(server.stderr(), /"event":"stopped"/);
  stuck.destroy();
});

test("serve on Deno that runs out of file descriptors says so in the log and exits 1 instead of serving nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-emfile-"));
  const server = await serveOnDeno(join(dir, "fg.db"), { maxOpenFiles: 200 });
  const { port } = new URL(server.url);
  const sockets = Array.from({ length: 300 }, () => connect(Number(port), "127.0.0.1").on("error", () => {}));
  try {
    assert.equal(await server.exited(), "exit=1");
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  assert.match(server.stderr(), /"event":"server_failed","error":"[^"]*Too many open files/);
  assert.doesNotMatch(server.stderr(), /Uncaught/);
});

test("a read-only command on Deno refuses a --db symlink whose target is missing, like Node, and creates nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-dangling-"));
  const link = join(dir, "fg.db");
  symlinkSync(join(dir, "missing", "target.db"), link);
  const result = await denoCli(["users", "list", "--db", link]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /no database at/);
  assert.equal(existsSync(join(dir, "missing")), false);
});

test("a command on Deno that creates the database through a --db symlink to a missing file makes the target private", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-link-"));
  const link = join(dir, "fg.db");
  symlinkSync(join(dir, "target.db"), link);
  const result = await denoCli(["users", "add", "--username", "robot", "--integration", "--org", "acme", "--db", link]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(statSync(join(dir, "target.db")).mode & 0o777, 0o600);
});

test("a --db path with a ./ segment in a new directory works on Deno as on Node", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-dot-"));
  const result = await denoCli(["users", "add", "--username", "robot", "--integration", "--org", "acme", "--db", `${dir}/new/./fg.db`]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(existsSync(join(dir, "new", "fg.db")));
});

test("serve --workers 2 on Deno is refused as a bad argument before any database is made", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-workers-"));
  const db = join(dir, "fg.db");
  const result = await denoCli(["serve", "--workers", "2", "--port", "0", "--db", db]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--workers is not supported on this runtime/);
  assert.equal(existsSync(db), false);
});

test("import doorkeeper on Deno streams its files through the Deno adapter, and names a missing one", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-deno-import-"));
  const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
  const args = ["import", "doorkeeper", "--db", join(dir, "fg.db"), "--applications", file("apps.csv", applicationsCsv()),
    "--integration-users", file("integration.csv", integrationUsersCsv()), "--owners", file("owners.csv", ownersCsv())];
  const imported = await denoCli([...args, "--tokens", file("tokens.csv", tokensCsv()), "--json"]);
  assert.equal(imported.code, 0, imported.stderr);
  const report = JSON.parse(imported.stdout) as { applications: { imported: number }; owners: { imported: number }; tokens: { imported: number } };
  assert.deepEqual([report.applications.imported, report.owners.imported], [2, 3]);
  assert.ok(report.tokens.imported > 0);
  const missing = await denoCli([...args, "--tokens", join(dir, "absent.csv")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read .*absent\.csv: no such file/);
});
