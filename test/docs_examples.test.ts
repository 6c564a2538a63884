// Every shell example in README.md and docs/ runs as written: each ```sh block not marked `no-run` runs with `sh -e`
// in a copy of the checkout holding an empty, migrated database of its own; the placeholders it uses are filled from
// PLACEHOLDERS below. Blocks marked `no-run` (minutes long, a server that never exits, another system's database) are
// held to the cheaper checks at the end: the npm scripts, deno tasks, script files, commands and options they name
// exist.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { findPostgresBinaries } from "../scripts/lib/postgres_cluster.ts";
import { test } from "./helpers/bounded.ts";
import { commandLines, denoTasks, fieldgateInvocations, inlineCode, nodeFiles, npmScripts, printingCapture, shapeMismatch, type ShellBlock, shellBlocks, steps } from "./helpers/doc_blocks.ts";
import { applicationsCsv, integrationUsersCsv, ownersCsv, tokensCsv } from "./helpers/doorkeeper_fixtures.ts";
import { type Instances, postJson, startInstances } from "./helpers/instances.ts";
import { postgresTest } from "./helpers/postgres.ts";
import { findExecutable, requireComponent } from "./helpers/system_component.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = join(ROOT, "node_modules/.bin/node");
// The examples are processes (npm, node, curl) whatever runs this file, so they are registered under Node's runner
// only: under deno test they would only run again.
const ON_NODE = !("Deno" in globalThis);

const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)]
  .map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
const blocks = docs.flatMap(({ file, text }) => shellBlocks(file, text));

/** The files the doorkeeper import example reads, in the copy's root, where `npm run` runs its script. */
const FILES: Record<string, () => string> = {
  "oauth_applications.csv": () => applicationsCsv(),
  "oauth_access_tokens.csv": () => tokensCsv(),
  "owners.csv": () => ownersCsv(),
  "integration.csv": () => integrationUsersCsv(),
};

/** What a running block needs that the docs leave to the reader: a server, a client, a token, a database URL. */
interface Given {
  server?: { origin: string; clientId: string; clientSecret: string; token: string };
  postgresUrl?: string;
}

/** Each placeholder the docs use and what the test puts in its place. */
const PLACEHOLDERS: [RegExp, (given: Required<Given>) => string][] = [
  [/http:\/\/localhost:8080/g, (g) => g.server.origin], // `serve` of this test, demo seeded, on 127.0.0.1 port 0
  [/<client_id>/g, (g) => g.server.clientId], // its demo client-credentials client
  [/<client_secret>/g, (g) => g.server.clientSecret],
  [/postgres:\/\/[^\s"'`]+/g, (g) => g.postgresUrl], // a fresh database on the tests' PostgreSQL
  [/(?<![\w.])\/backups\//g, () => "backups/"], // a directory in the copy
];

/** The environment a block sees: the pinned Node first on PATH, and the variables the docs assume set. */
function blockEnv(given: Given): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_TEST_CONTEXT: undefined };
  for (const name of Object.keys(env)) if (name.startsWith("FIELDGATE_")) delete env[name];
  const pgBin = given.postgresUrl ? findPostgresBinaries(process.env) : undefined;
  Object.assign(env, {
    PATH: [join(ROOT, "node_modules/.bin"), pgBin, process.env.PATH].filter(Boolean).join(":"),
    PASSWORD: "correct horse battery staple", // `printf '%s\n' "$PASSWORD" | … --password-stdin`
    TOKEN: given.server?.token, // an access token of the demo client, for blocks that start from one
    FIELDGATE_DATABASE_URL: given.postgresUrl,
    FIELDGATE_PBKDF2_ITERATIONS: "1000", // hashing speed only
  });
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

const needsServer = (body: string) => /localhost:8080|<client_id>|<client_secret>|\$TOKEN\b/.test(body);
const needsPostgres = (body: string) => /postgres:\/\/|FIELDGATE_DATABASE_URL|\bpg_(dump|restore)\b/.test(body);
const where = (block: ShellBlock) => `${block.file}:${block.line}`;

// The HTTP examples use curl, which npm install does not bring: without it, requireComponent reports them once as
// not run (a failure under CI=true) and they are not registered.
const curl = ON_NODE && blocks.some((b) => b.run && /\bcurl\b/.test(b.body)) &&
  requireComponent("curl", () => findExecutable(undefined, "curl"), "apt-get install curl");

for (const block of ON_NODE ? blocks.filter((b) => b.run && (curl || !/\bcurl\b/.test(b.body))) : []) {
  const name = `the example at ${where(block)} runs as written`;
  if (needsPostgres(block.body)) postgresTest(name, (db) => runBlock(block, { postgresUrl: db.url }));
  else test(name, async () => runBlock(block, needsServer(block.body) ? { server: await demoServer() } : {}));
}

async function runBlock(block: ShellBlock, given: Given): Promise<void> {
  const body = PLACEHOLDERS.reduce((text, [pattern, value]) => text.replace(pattern, () => value(given as Required<Given>)), block.body);
  const marker = "fieldgate-docs-step-end";
  const parts = steps(body);
  const script = parts
    .map((s) => `${s.documented === undefined ? s.script : printingCapture(s.script)}\nprintf '\\n%s\\n' '${marker}'`)
    .join("\n");
  const view = await checkoutCopy();
  try {
    const result = await run("sh", ["-e", "-c", script], { cwd: view, env: blockEnv(given) });
    assert.equal(result.code, 0, `${where(block)} exited ${result.code}:\n${result.stderr}\n${result.stdout}`);
    const outputs = result.stdout.split(`\n${marker}\n`);
    parts.forEach((part, i) => {
      const printed = (outputs[i] ?? "").trim();
      if (part.documented === undefined) return;
      const json = (text: string) => {
        try {
          return JSON.parse(text) as unknown;
        } catch (error) {
          throw new Error(`${where(block)}, step ${i + 1}: not JSON: ${text.slice(0, 200)}`, { cause: error });
        }
      };
      const mismatch = shapeMismatch(json(part.documented), json(printed));
      assert.equal(mismatch, undefined, `${where(block)}, step ${i + 1}`);
    });
  } finally {
    rmSync(view, { recursive: true, force: true });
  }
}

/**
 * A directory the commands take for the checkout: its files linked, src copied (an example may write there), and a
 * data/ of its own holding an empty migrated database at the default path, so nothing lands in the real checkout.
 */
async function checkoutCopy(): Promise<string> {
  const template = await migratedDatabase();
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-docs-"));
  for (const entry of readdirSync(ROOT)) {
    if (entry.startsWith(".") || entry === "data" || entry === "src") continue;
    symlinkSync(join(ROOT, entry), join(dir, entry));
  }
  cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  mkdirSync(join(dir, "data"));
  symlinkSync(join(ROOT, "data/demo-fields.geojson"), join(dir, "data/demo-fields.geojson"));
  copyFileSync(template, join(dir, "data/fieldgate.db"));
  mkdirSync(join(dir, "backups"));
  for (const [file, content] of Object.entries(FILES)) writeFileSync(join(dir, file), content());
  return dir;
}

/** A directory for the template database and the server's, made on first use (under Deno, never). */
let scratchDir: string | undefined;
const scratch = () => (scratchDir ??= mkdtempSync(join(tmpdir(), "fieldgate-docs-scratch-")));
after(() => scratchDir && rmSync(scratchDir, { recursive: true, force: true }));

let migrated: Promise<string> | undefined;
function migratedDatabase(): Promise<string> {
  migrated ??= (async () => {
    const file = join(scratch(), "template.db");
    const result = await run(NODE, [join(ROOT, "src/adapters/node.ts"), "migrate", "--db", file], { cwd: scratch() });
    assert.equal(result.code, 0, result.stderr);
    return file;
  })();
  return migrated;
}

let server: Promise<Required<Given>["server"]> | undefined;
let instances: Instances | undefined;
after(() => instances?.close());

/** One `serve` for the file, demo seeded, and an access token of its client-credentials client. */
function demoServer(): Promise<Required<Given>["server"]> {
  server ??= (async () => {
    const db = join(scratch(), "served.db");
    instances = await startInstances(db, { count: 1, env: { FIELDGATE_DEMO: "true" } });
    const demo = JSON.parse(readFileSync(`${db}.demo-credentials.json`, "utf8"));
    const { client_id: clientId, client_secret: clientSecret } = demo.clientCredentialsClient;
    const origin = instances.all[0]!.origin;
    const issued = await postJson(origin, "/oauth/token", { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret });
    assert.equal(issued.status, 200);
    return { origin, clientId, clientSecret, token: String(issued.json?.access_token) };
  })();
  return server;
}

/**
 * A process bounded in time: an example that hangs (a server started in the foreground) fails its test, naming it,
 * instead of stalling the run. Its own process group, so the bound also kills what it started, which holds its pipes.
 */
function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? blockEnv({}),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The cheaper checks, over every block, run or not, and over command lines written inline in the prose.
const allLines = [
  ...blocks.map((b) => ({ at: where(b), lines: commandLines(b.body) })),
  ...docs.map(({ file, text }) => ({ at: file, lines: inlineCode(text) })),
];

test("every npm script, deno task and script file the docs name exists", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const deno = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as { tasks: Record<string, string> };
  const missing = allLines.flatMap(({ at, lines }) => lines.flatMap((line) => [
    ...npmScripts(line).filter((s) => !(s in pkg.scripts)).map((s) => `${at}: npm script ${s}`),
    ...denoTasks(line).filter((t) => !(t in deno.tasks)).map((t) => `${at}: deno task ${t}`),
    ...nodeFiles(line).filter((f) => !existsSync(join(ROOT, f))).map((f) => `${at}: node ${f}`),
  ]));
  assert.deepEqual(missing, []);
});

if (ON_NODE) test("every fieldgate command and option the docs name exists", async () => {
  const cli = (args: string[]) => run(NODE, [join(ROOT, "src/adapters/node.ts"), ...args], { cwd: scratch() });
  const usage = await cli(["--help"]);
  assert.equal(usage.code, 0, usage.stderr);
  const commands = [...usage.stdout.matchAll(/^ {2}([a-z-]+(?: [a-z-]+)?)\b/gm)].map((m) => m[1]);
  const named = new Map<string, Set<string>>();
  const unknown: string[] = [];
  for (const { at, lines } of allLines) {
    for (const { words, flags } of lines.flatMap(fieldgateInvocations)) {
      if (words.length === 0) continue; // a synopsis: `fieldgate -- <command> [options]`
      const command = commands.filter((c) => `${words.join(" ")} `.startsWith(`${c} `)).sort().at(-1);
      if (command === undefined) unknown.push(`${at}: ${words.join(" ")}`);
      else flags.forEach((f) => named.set(command, (named.get(command) ?? new Set()).add(`${f}@${at}`)));
    }
  }
  assert.deepEqual(unknown, []);
  const helps = await Promise.all([...named.keys()].map((command) => cli([...command.split(" "), "--help"])));
  [...named].forEach(([command, flags], i) => {
    const help = helps[i]!;
    assert.equal(help.code, 0, `${command} --help: ${help.stderr}`);
    const absent = [...flags].filter((f) => !new RegExp(`^ {2}${f.split("@")[0]}(?= |$)`, "m").test(help.stdout));
    assert.deepEqual(absent, [], `fieldgate ${command} --help lists no such option`);
  });
});

test("docs hold runnable examples, so the test above cannot pass by finding none", () => {
  assert.ok(blocks.filter((b) => b.run).length >= 5, blocks.map(where).join(", "));
  assert.ok(blocks.some((b) => b.run && needsServer(b.body)));
  assert.ok(blocks.some((b) => b.run && needsPostgres(b.body)));
});
