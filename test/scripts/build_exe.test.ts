// The single executable `npm run build:exe` makes, run as a self-hoster runs it: copied alone into an empty directory,
// with no node_modules and no Node on PATH. Built once per change of the sources (scripts/build_exe.ts caches it).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { startChildServer } from "../helpers/child_server.ts";
import { formFields } from "../helpers/browser_session.ts";
import { applicationsCsv, ownersCsv, PLAIN } from "../helpers/doorkeeper_fixtures.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { requireComponent } from "../helpers/system_component.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { version: VERSION } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
/** No Node, npm or node_modules reachable: only the system's own tools (the contract check needs curl and setsid). */
const BARE_PATH = "/usr/bin:/bin";
const BUILD_TIMEOUT_MS = 300_000;

/** Directories holding a copy of the executable (120 MiB each), removed when the file's tests end. */
const placed: string[] = [];
after(() => {
  for (const dir of placed) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the executable alone in a new directory. */
function placeExecutable(built: string): { dir: string; exe: string } {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-exe-"));
  placed.push(dir);
  const exe = join(dir, "fieldgate");
  copyFileSync(built, exe);
  return { dir, exe };
}

function runExe(exe: string, args: string[], options: { cwd: string; env?: Record<string, string> }) {
  return spawnSync(exe, args, {
    cwd: options.cwd,
    env: { PATH: BARE_PATH, HOME: options.cwd, FIELDGATE_PBKDF2_ITERATIONS: "1000", ...options.env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

async function totalCount(origin: string, token: string): Promise<Response> {
  return await post(`${origin}/graphql`, { query: "{ fields { total_count } }" }, { authorization: `Bearer ${token}` });
}

// Registered under Node's runner only (npm run test:node): the executable is the same file whichever runner starts it.
// Under c8 (npm run coverage) it would measure the bundle, not src/.
if (!("Deno" in globalThis) && process.env.NODE_V8_COVERAGE === undefined) {
  let built: string;
  before(async () => {
    const { buildExecutable } = await import("../../scripts/build_exe.ts");
    built = (await buildExecutable()).path;
  }, { timeout: BUILD_TIMEOUT_MS });

  test("the executable prints package.json's version with --version", () => {
    const { dir, exe } = placeExecutable(built);
    const result = runExe(exe, ["--version"], { cwd: dir });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `${VERSION}\n`);
  });

  test("the executable in an empty directory seeds the demo, issues and revokes a token, and serves its pages", async () => {
    const { dir, exe } = placeExecutable(built);
    const env = { PATH: BARE_PATH, HOME: dir, PORT: "0", FIELDGATE_PBKDF2_ITERATIONS: "1000" };
    const server = startChildServer(exe, ["serve"], { cwd: dir, env });
    try {
      const origin = await server.url;
      const demo = JSON.parse(readFileSync(join(dir, "data/demo-credentials.json"), "utf8"));
      assert.equal(demo.fields, 8, "the demo's GeoJSON travels inside the executable");
      const client = demo.clientCredentialsClient;
      const issued = await post(`${origin}/oauth/token`, { grant_type: "client_credentials", ...pick(client) });
      assert.equal(issued.status, 200);
      const { access_token: token } = await issued.json();
      assert.deepEqual(await (await totalCount(origin, token)).json(), { data: { fields: { total_count: 8 } } });
      const revoked = await post(`${origin}/oauth/revoke`, { token, token_type_hint: "access_token", ...pick(client) });
      assert.equal(revoked.status, 200);
      assert.equal((await totalCount(origin, token)).status, 401, "a revoked token reads nothing");
      const signIn = await fetch(`${origin}/signin`);
      assert.equal(signIn.status, 200);
      assert.match(await signIn.text(), /<form[^>]+method="post"/i);
      const style = await fetch(`${origin}/assets/style.css`);
      assert.equal(style.status, 200);
      assert.match(style.headers.get("content-type") ?? "", /text\/css/);
      await style.body?.cancel();
    } finally {
      assert.equal(await server.stop(), "0 null", server.stderr());
    }
    assert.equal(server.log().find((line) => line.event === "listening")?.version, VERSION);
  });

  test("the executable signs in a person imported from Doorkeeper, checking the bcrypt digest on a worker thread", async () => {
    const { dir, exe } = placeExecutable(built);
    writeFileSync(join(dir, "applications.csv"), applicationsCsv());
    writeFileSync(join(dir, "owners.csv"), ownersCsv());
    const imported = runExe(exe, ["import", "doorkeeper", "--applications", "applications.csv", "--owners", "owners.csv"], { cwd: dir });
    assert.equal(imported.status, 0, imported.stderr);
    const env = { PATH: BARE_PATH, HOME: dir, PORT: "0", FIELDGATE_PBKDF2_ITERATIONS: "1000" };
    const server = startChildServer(exe, ["serve"], { cwd: dir, env });
    try {
      const origin = await server.url;
      const page = await fetch(`${origin}/signin`);
      const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
      const fields = formFields(await page.text(), "/signin");
      const signIn = (password: string) => fetch(`${origin}/signin`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ ...fields, username: "alice@example.com", password }),
      });
      const wrong = await signIn("not alice's password");
      assert.equal(wrong.status, 400, "a wrong password is refused, not an error");
      await wrong.body?.cancel();
      const right = await signIn(PLAIN.alicePassword);
      assert.equal(right.status, 303, await right.text());
    } finally {
      assert.equal(await server.stop(), "0 null", server.stderr());
    }
  });

  test("the executable's serve --workers 2 runs two workers on one port, as node:cluster forks it", async () => {
    const { dir, exe } = placeExecutable(built);
    const env = { PATH: BARE_PATH, HOME: dir, PORT: "0", FIELDGATE_DEMO: "false" };
    const server = startChildServer(exe, ["serve", "--workers", "2"], { cwd: dir, env });
    try {
      const origin = await server.url;
      // Each worker logs its own listening line once it serves; the forked ones must parse `serve --workers 2` too.
      while (server.log().filter((line) => line.event === "listening").length < 2) await new Promise((r) => setTimeout(r, 20));
      assert.equal((await fetch(`${origin}/healthz`)).status, 200);
    } finally {
      assert.equal(await server.stop(), "0 null", server.stderr());
    }
  });

  // Beside this checkout, or beside the local checkout it was cloned from (CI's clean clone of a workspace).
  const besideShared = (checkout: string) => join(checkout, "../shared/tools/cli-contract-check");
  const origin = spawnSync("git", ["remote", "get-url", "origin"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim();
  const contractCheck = requireComponent(
    "cli-contract-check",
    () => [process.env.FIELDGATE_CONTRACT_CHECK, besideShared(ROOT), origin?.startsWith("/") ? besideShared(origin) : undefined]
      .find((path) => path !== undefined && existsSync(path)),
    "run from a checkout beside shared/tools (or a clone of one), or set FIELDGATE_CONTRACT_CHECK to the tool's path",
  );
  if (contractCheck) {
    test("the executable keeps the admin CLI contract (shared/tools/cli-contract-check)", () => {
      const { exe } = placeExecutable(built);
      // The tool's own helpers call `node -e`: the machine's node, not one the executable would need.
      const result = spawnSync("bash", [contractCheck], {
        cwd: ROOT,
        env: { ...process.env, FIELDGATE_CMD: exe, FIELDGATE_PBKDF2_ITERATIONS: "1000" },
        encoding: "utf8",
        timeout: 120_000,
      });
      assert.match(result.stdout, /contract ok/, `${result.stdout}${result.stderr}`);
    });
  }

  postgresTest("the executable runs the CLI and serves on PostgreSQL", async (db) => {
    const { dir, exe } = placeExecutable(built);
    const env = { FIELDGATE_DATABASE_URL: db.url, FIELDGATE_DEMO: "false" };
    assert.equal(runExe(exe, ["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme"], { cwd: dir, env }).status, 0);
    const added = runExe(exe, [
      "clients", "add", "--name", "sync", "--grant", "client_credentials", "--integration-user", "robot@example.com",
      "--scope", "fields:read", "--json",
    ], { cwd: dir, env });
    assert.equal(added.status, 0, added.stderr);
    const client = JSON.parse(added.stdout);
    const server = startChildServer(exe, ["serve"], { cwd: dir, env: { PATH: BARE_PATH, HOME: dir, PORT: "0", ...env } });
    try {
      const origin = await server.url;
      const issued = await post(`${origin}/oauth/token`, { grant_type: "client_credentials", ...pick(client) });
      assert.equal(issued.status, 200, server.stderr());
      assert.equal((await issued.json()).token_type, "Bearer");
    } finally {
      assert.equal(await server.stop(), "0 null", server.stderr());
    }
    assert.ok(!existsSync(join(dir, "data")), "no SQLite file was made beside it");
  });
}

function pick(client: { client_id: string; client_secret: string }) {
  return { client_id: client.client_id, client_secret: client.client_secret };
}
