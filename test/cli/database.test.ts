// Which database a command opens (--db of either kind, FIELDGATE_DB, FIELDGATE_DATABASE_URL) and how it is refused.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import process from "node:process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { classifyStoreFailure } from "../../src/app/store_failure.ts";
import { connectionRoom, connectionWarning } from "../../src/cli/database.ts";
import { test } from "../helpers/bounded.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { cliHarness } from "./harness.ts";

/** A server nobody listens on: port 1 refuses connections at once. */
const UNREACHABLE = "postgres://fg:hunter2@127.0.0.1:1/fieldgate";

const NODE = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
const SERVE_NODE = new URL("../../src/adapters/serve_node.ts", import.meta.url).href;

test("the adapter opens a SQLite file without loading the PostgreSQL modules or postgres.js, and a URL loads them", () => {
  // A process of its own, which records every module it resolves: this test file has loaded them already.
  const h = cliHarness();
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); loaded.push(found.url); return found; } });
    const postgres = () => loaded.filter((url) => /\\/postgres\\//.test(url));
    const { createNodeDeps } = await import(${JSON.stringify(SERVE_NODE)});
    const deps = createNodeDeps({});
    const store = await deps.openStore(${JSON.stringify(h.dbPath)});
    await store.close();
    const onSqlite = postgres();
    await deps.openStore(${JSON.stringify(UNREACHABLE)}).then((s) => s.close(), () => {});
    console.log(JSON.stringify({ onSqlite, onUrl: postgres() }));
    process.exit(0);
  `;
  const child = spawnSync(NODE, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  const { onSqlite, onUrl } = JSON.parse(child.stdout) as { onSqlite: string[]; onUrl: string[] };
  assert.ok(existsSync(h.dbPath), "the SQLite file was created");
  assert.deepEqual(onSqlite, []);
  // The recording sees dynamic imports: opening the URL loaded both the store and the driver.
  assert.ok(onUrl.some((url) => url.endsWith("/src/store/postgres/store.ts")), onUrl.join("\n"));
  assert.ok(onUrl.some((url) => url.includes("/node_modules/postgres/")), onUrl.join("\n"));
});

test("a command given an unreachable PostgreSQL URL fails with exit 1, naming it without the password", async () => {
  const h = cliHarness();
  const result = await h.run(["users", "list", "--db", UNREACHABLE]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /cannot open postgres:\/\/fg@127\.0\.0\.1:1\/fieldgate: .*ECONNREFUSED/);
  assert.ok(!result.stderr.includes("hunter2"));
  assert.ok(!existsSync("postgres:") && !existsSync(join(h.dir, "postgres:")), "no file or directory named after the URL");
  assert.equal(h.snapshot(), "absent");
});

for (const args of [["users", "list"], ["serve", "--port", "0"], ["migrate"]]) {
  test(`${args[0]} against a peer that is not PostgreSQL exits 1 with one line within the connect timeout, after few dials`, async () => {
    let dials = 0;
    const peer = createServer((socket) => {
      dials++;
      socket.on("error", () => {});
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    });
    await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
    try {
      const url = `postgres://fg:hunter2@127.0.0.1:${(peer.address() as AddressInfo).port}/fieldgate`;
      const h = cliHarness();
      const started = performance.now();
      const result = await h.run([...args, "--db", url], { env: { FIELDGATE_DATABASE_CONNECT_TIMEOUT: "2" } });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^fieldgate \S+(?: \S+)?: cannot (?:open|migrate) postgres:\/\/fg@127\.0\.0\.1:\d+\/fieldgate: no PostgreSQL answer within 2 s after \d+ connection attempts/);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.ok(!`${result.stdout}${result.stderr}`.includes("hunter2"));
      assert.ok(performance.now() - started < 6_000);
      assert.ok(dials <= 20, `${dials} connections`);
    } finally {
      peer.close();
    }
  });
}

/** A mistyped scheme: a URL, never a SQLite file named after it (with its password) served empty. */
const MISTYPED = "postgress://fg:hunter2@127.0.0.1:1/fieldgate";

for (const args of [["users", "list"], ["serve", "--port", "0"], ["migrate"], ["clients", "add", "--name", "n", "--grant", "client_credentials", "--integration-user", "robot", "--scope", "fields:read"]]) {
  test(`${args.slice(0, 2).join(" ")} refuses a --db URL of an unknown scheme with exit 2, naming the scheme only`, async () => {
    const h = cliHarness();
    const result = await h.run([...args, "--db", MISTYPED]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--db has the unknown database URL scheme "postgress:"/);
    assert.ok(!`${result.stdout}${result.stderr}`.includes("hunter2"));
    assert.equal(h.snapshot(), "absent");
  });
}

test("an unknown scheme in FIELDGATE_DB or FIELDGATE_DATABASE_URL is refused with exit 2, naming the variable", async () => {
  for (const [name, env] of [["FIELDGATE_DB", { FIELDGATE_DB: MISTYPED }], ["FIELDGATE_DATABASE_URL", { FIELDGATE_DATABASE_URL: MISTYPED }]] as const) {
    const h = cliHarness();
    const result = await h.run(["users", "list"], { env });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${name} has the unknown database URL scheme "postgress:"`));
    assert.ok(!result.stderr.includes("hunter2"));
  }
});

test("serve given a mistyped --db URL in a process exits 2 at once, creating no file and printing no password", () => {
  const dir = mkdtempSync(join(tmpdir(), "fg-typo-"));
  try {
    const child = spawnSync(NODE, [fileURLToPath(new URL("../../src/adapters/node.ts", import.meta.url)), "serve", "--port", "0", "--db", MISTYPED], {
      cwd: dir,
      encoding: "utf8",
      timeout: 20_000,
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, FIELDGATE_DB: undefined, FIELDGATE_DATABASE_URL: undefined },
    });
    assert.equal(child.status, 2, child.stderr);
    assert.match(child.stderr, /unknown database URL scheme "postgress:"/);
    assert.ok(!`${child.stdout}${child.stderr}`.includes("hunter2"));
    assert.deepEqual(readdirSync(dir), [], "nothing created in the working directory");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--db names the database of either kind in place of what the environment names, never as both set", async () => {
  const h = cliHarness();
  h.createDatabase();
  // The environment names PostgreSQL; --db a SQLite file: the file is used and the URL never dialled.
  const fromFile = await h.run(["users", "list", "--json", "--db", h.dbPath], { env: { FIELDGATE_DATABASE_URL: UNREACHABLE } });
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.deepEqual(JSON.parse(fromFile.stdout), { users: [] });
  // The environment names a file; --db a URL: the URL is used (and is unreachable here).
  const fromUrl = await h.run(["users", "list", "--db", UNREACHABLE], { env: { FIELDGATE_DB: h.dbPath } });
  assert.equal(fromUrl.code, 1);
  assert.match(fromUrl.stderr, /cannot open postgres:\/\/fg@127\.0\.0\.1:1\/fieldgate/);
});

test("both FIELDGATE_DB and FIELDGATE_DATABASE_URL in the environment is refused with exit 2", async () => {
  const h = cliHarness();
  h.createDatabase();
  const before = h.snapshot();
  const result = await h.run(["users", "list"], { env: { FIELDGATE_DB: h.dbPath, FIELDGATE_DATABASE_URL: UNREACHABLE } });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /FIELDGATE_DB \(a SQLite file\) and FIELDGATE_DATABASE_URL \(PostgreSQL\) are both set/);
  assert.ok(!result.stderr.includes("hunter2"));
  assert.equal(h.snapshot(), before);
});

postgresTest("a command that only reads refuses a PostgreSQL database without fieldgate's tables, creating none", async ({ url }) => {
  const h = cliHarness();
  const result = await h.run(["users", "list", "--db", url]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /no fieldgate database at postgres:\/\/.*: check --db or FIELDGATE_DATABASE_URL, or create its tables with `fieldgate migrate`/);
  const pg = await openPostgres(url, { max: 1 });
  try {
    assert.deepEqual(await pg.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"), []);
  } finally {
    await pg.close();
  }
});

postgresTest("FIELDGATE_DATABASE_URL alone is where migrate, and then backup's refusal, find the database", async ({ url }) => {
  const h = cliHarness();
  const env = { FIELDGATE_DATABASE_URL: url };
  const migrated = await h.run(["migrate", "--json"], { env });
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.ok((JSON.parse(migrated.stdout).applied as string[]).length > 0);
  assert.equal(existsSync(h.dbPath), false, "no SQLite file beside it");
  const copy = join(h.dir, "copy.db");
  const backup = await h.run(["backup", copy], { env });
  assert.equal(backup.code, 2, backup.stderr);
  assert.match(backup.stderr, /backup copies a SQLite file; back up a PostgreSQL database with pg_dump/);
  assert.equal(existsSync(copy), false);
});

test("connectionWarning: a role whose connections leave no room for a second pool and the operator's tools", () => {
  const rows = [
    { room: { usable: 97, pool: 4 }, warns: false },
    { room: { usable: 11, pool: 4 }, warns: false }, // two pools and three operator connections fit exactly
    { room: { usable: 10, pool: 4 }, warns: true },
    { room: { usable: 2, pool: 4 }, warns: true },
  ];
  for (const row of rows) assert.equal(connectionWarning(row.room) !== undefined, row.warns, JSON.stringify(row.room));
  assert.deepEqual(connectionWarning({ usable: 10, pool: 4 }), { usable_connections: 10, pool: 4, instances_that_fit: 1 });
});

postgresTest("a role at its connection limit: connectionRoom says so, and a refused connection is exhaustion, not busy", async ({ url }) => {
  const role = `fg_limited_${process.pid}`;
  const admin = await openPostgres(url, { max: 1 });
  const limited = new URL(url);
  limited.username = role;
  limited.password = "limited-pass";
  try {
    await admin.exec(`CREATE ROLE ${role} LOGIN PASSWORD 'limited-pass' CONNECTION LIMIT 2`);
    const config = { databasePool: 4, databasePrepare: true, databaseConnectTimeout: 10 } as Parameters<typeof connectionRoom>[1];
    const room = await connectionRoom(limited.href, config);
    assert.deepEqual(room, { usable: 2, pool: 4 });
    // Four statements at once on a pool of four, where the role may hold two connections: the others are refused.
    const pg = await openPostgres(limited.href, { max: 4 });
    try {
      const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => pg.query("SELECT pg_sleep(0.3)")));
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
      assert.ok(refused.length >= 1, "some statement found no slot");
      for (const { reason } of refused) assert.equal(classifyStoreFailure(reason)?.event, "database_connections_exhausted", String(reason));
    } finally {
      await pg.close();
    }
  } finally {
    await admin.exec(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.close();
  }
});
