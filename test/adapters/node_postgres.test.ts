// `serve` on PostgreSQL as real processes: it starts on an empty database, several start together on one, and the CLI
// administers the database a running server uses.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { cliHarness } from "../cli/harness.ts";
import { ccRequest } from "../helpers/codes.ts";
import { postgresTest } from "../helpers/postgres.ts";

const NODE = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
const ENTRY = fileURLToPath(new URL("../../src/adapters/node.ts", import.meta.url));

/** What a placeholder PostgreSQL store module answers until it is implemented (src/store/postgres/*.ts). */

interface Serving {
  /** The JSON lines of its log so far. */
  log(): Record<string, unknown>[];
  /** Everything on stderr so far. */
  stderr(): string;
  stdout(): string;
  /** The listening line's fields, once it logged one; rejects if the process exits first. */
  listening: Promise<Record<string, unknown>>;
  /** Sends SIGTERM; resolves with "code signal" once it exited. */
  stop(): Promise<string>;
  kill(): void;
}

/** `node src/adapters/node.ts serve --host 127.0.0.1 --port 0 …` as a child process, its stdout and log captured. */
function spawnServe(args: string[], env: Record<string, string>): Serving {
  const child = spawn(NODE, [ENTRY, "serve", "--host", "127.0.0.1", "--port", "0", ...args], {
    env: { ...process.env, FIELDGATE_PBKDF2_ITERATIONS: "1000", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  const exited = new Promise<string>((resolve) => child.on("exit", (code, signal) => resolve(`${code} ${signal}`)));
  const log = () =>
    stderr.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    const look = () => {
      const line = log().find((l) => l.event === "listening");
      if (line) resolve(line);
    };
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      look();
    });
    void exited.then((how) => reject(new Error(`serve exited (${how}) before listening: ${stderr}`)));
  });
  listening.catch(() => {}); // awaited by the test; an unawaited rejection must not end the process
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  return {
    log,
    stderr: () => stderr,
    stdout: () => stdout,
    listening,
    stop() {
      // process.kill, not child.kill: Deno's child_process reports a child.kill()ed process as killed by that signal
      // even when it handled the signal and exited 0.
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, "SIGTERM");
      return exited;
    },
    kill: () => void child.kill("SIGKILL"),
  };
}

postgresTest("serve starts on an empty PostgreSQL database, answers /healthz and logs it without the password", async (db) => {
  const withPassword = new URL(db.url);
  withPassword.password = "s3cret-pw";
  const server = spawnServe(["--db", withPassword.href], { FIELDGATE_DEMO: "false" });
  try {
    const listening = await server.listening;
    const shown = new URL(db.url);
    assert.equal(listening.database, shown.href);
    const res = await fetch(`${listening.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: "ok" });
    assert.equal(await server.stop(), "0 null", server.stderr());
    assert.ok(!`${server.stderr()}${server.stdout()}`.includes("s3cret-pw"), "the password appears nowhere");
  } finally {
    server.kill();
  }
  const pg = await openPostgres(db.url, { max: 1 });
  try {
    assert.deepEqual(await pg.query("SELECT COUNT(*) AS n FROM schema_migrations"), [{ n: MIGRATIONS.length }]);
  } finally {
    await pg.close();
  }
});

postgresTest("users add and clients add with --db URL set up the database a running serve answers from", async (db) => {
  const server = spawnServe([], { FIELDGATE_DATABASE_URL: db.url, FIELDGATE_DEMO: "false" });
  try {
    const { url } = await server.listening;
    const h = cliHarness();
    const client = await (async () => {
      await h.json(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme", "--db", db.url]);
      return await h.json([
        "clients", "add", "--name", "Nightly sync", "--grant", "client_credentials",
        "--integration-user", "robot@example.com", "--scope", "fields:read", "--db", db.url,
      ]);
    })();
    const res = await (async () => {
      const answer = await fetch(new Request(new URL("/oauth/token", String(url)), ccRequest({
        clientId: String(client.client_id),
        clientSecret: String(client.client_secret),
      })));
      if (answer.status === 500) throw new Error(`token request failed: ${server.stderr()}`);
      return answer;
    })();
    assert.equal(res.status, 200);
    assert.equal((await res.json()).token_type, "Bearer");
    assert.equal(await server.stop(), "0 null");
  } finally {
    server.kill();
  }
});

postgresTest("three serve processes started together on one empty database all come up, migrated once", async (db) => {
  const servers = Array.from({ length: 3 }, () => spawnServe([], { FIELDGATE_DATABASE_URL: db.url, FIELDGATE_DEMO: "false" }));
  try {
    const listening = await Promise.all(servers.map((s) => s.listening));
    const statuses = await Promise.all(listening.map((l) => fetch(`${l.url}/healthz`).then((r) => r.status)));
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.deepEqual(await Promise.all(servers.map((s) => s.stop())), ["0 null", "0 null", "0 null"]);
  } finally {
    for (const s of servers) s.kill();
  }
  const pg = await openPostgres(db.url, { max: 1 });
  try {
    const applied = await pg.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
    assert.deepEqual(applied.map((r) => r.version), MIGRATIONS.map((_, i) => i + 1));
  } finally {
    await pg.close();
  }
});

postgresTest("serve --workers 2 on PostgreSQL: both workers, each with its own pool, come up on one database and answer", async (db) => {
  const server = spawnServe(["--workers", "2", "--db", db.url], { FIELDGATE_DEMO: "false" });
  try {
    const { url } = await server.listening;
    while (server.log().filter((l) => l.event === "listening").length < 2) await new Promise((r) => setTimeout(r, 20));
    const statuses = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/healthz`).then((r) => r.status)));
    assert.deepEqual(new Set(statuses), new Set([200]));
    assert.equal(await server.stop(), "0 null", server.stderr());
    assert.equal(server.log().filter((l) => l.event === "stopped").length, 2);
  } finally {
    server.kill();
  }
});

postgresTest("three serve processes started together on one empty database seed the demo once", async (db) => {
  const servers = Array.from({ length: 3 }, () => spawnServe([], { FIELDGATE_DATABASE_URL: db.url }));
  try {
    await Promise.all(servers.map((s) => s.listening));
    const banners = servers.filter((s) => s.stdout().includes("fieldgate demo data created"));
    assert.equal(banners.length, 1, "one process seeded and showed the credentials");
    const others = servers.filter((s) => s.log().some((l) => l.event === "demo_seeded_elsewhere"));
    assert.ok(others.length <= 2);
    assert.deepEqual(await Promise.all(servers.map((s) => s.stop())), ["0 null", "0 null", "0 null"]);
  } finally {
    for (const s of servers) s.kill();
  }
  const pg = await openPostgres(db.url, { max: 1 });
  try {
    assert.deepEqual(await pg.query("SELECT slug FROM organizations"), [{ slug: "demo-farm" }]);
  } finally {
    await pg.close();
  }
});
