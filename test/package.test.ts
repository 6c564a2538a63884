// The npm package as a user gets it: from a release folder (scripts/release.ts: `npm pack`, whose prepack runs
// `npm run build`, and the executable, with SHA256SUMS), installed from the tarball into a new project, then the README's embedding snippet there on Node 24, Node 22 and Deno 2 (through
// `npm:fieldgate`), and `npx fieldgate` from that install.
import { test } from "./helpers/bounded.ts";
import { DIGESTS, PLAIN } from "./helpers/doorkeeper_fixtures.ts";
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { startChildServer } from "./helpers/child_server.ts";
import { findExecutable, requireComponent } from "./helpers/system_component.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const { version: VERSION } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
/** The directory of the pinned Node 24 (node_modules/.bin/node is a link into it). */
const NODE24_DIR = dirname(realpathSync(join(ROOT, "node_modules/.bin/node")));
const DENO = join(ROOT, "node_modules/.bin/deno");
/**
 * The newest Node 22, the other line `engines` names. Installed by this test into a cache once (about 30 MB), not a
 * devDependency: the `node` package's bin would collide with the pinned Node 24's in node_modules/.bin.
 */
const NODE22 = "22.23.3";
const NODE22_PREFIX = join(ROOT, "node_modules/.cache/fieldgate-node22");
/** The permissions docs/architecture.md names for embedding on Deno (graphql reads NODE_ENV). */
const DENO_PERMISSIONS = ["--allow-read", "--allow-write", "--allow-env=NODE_ENV"];
const STEP_TIMEOUT_MS = 120_000;

/** A PATH whose `node` is the one in `nodeDir`, ahead of the machine's own. */
function pathWith(nodeDir: string): string {
  return [nodeDir, process.env.PATH ?? ""].join(":");
}

function run(command: string, args: string[], options: { cwd: string; path?: string }): SpawnSyncReturns<string> {
  const env = { ...process.env, PATH: options.path ?? pathWith(NODE24_DIR), CI: "", npm_config_update_notifier: "false" };
  const result = spawnSync(command, args, { cwd: options.cwd, env, encoding: "utf8", timeout: STEP_TIMEOUT_MS });
  assert.equal(result.status, 0, `${command} ${args.join(" ")}: ${result.stderr}${result.stdout}`);
  return result;
}

/** The README's embedding snippet up to where it hands app.fetch to a server: the part that runs anywhere. */
function readmeSnippet(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Embedding"));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const end = code.indexOf("// Any Request/Response server");
  assert.ok(code.includes('from "fieldgate"') && end > 0, "the README's Embedding section has its snippet");
  return code.slice(0, end);
}

/** The snippet, then a client-credentials token and `{ fields { total_count } }` through app.fetch, printed as JSON. */
function embeddingScript(client: { client_id: string; client_secret: string }, from: string): string {
  const request = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    `new Request("https://auth.example.com${path}", { method: "POST", headers: ${JSON.stringify({ "content-type": "application/json", ...headers })}, body: ${JSON.stringify(JSON.stringify(body))} })`;
  const tokenBody = { grant_type: "client_credentials", ...client };
  return readmeSnippet().replace('from "fieldgate"', `from "${from}"`) + `
const issued = await app.fetch(${request("/oauth/token", tokenBody)}, { remoteAddress: "127.0.0.1" });
const token = await issued.json();
const read = await app.fetch(new Request("https://auth.example.com/graphql", { method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + token.access_token },
  body: JSON.stringify({ query: "{ fields { total_count } }" }) }), { remoteAddress: "127.0.0.1" });
const result = await read.json();
maintenance.stop();
await app.close();
console.log(JSON.stringify({ status: issued.status, token_type: token.token_type, result }));
`;
}

interface Installed {
  scratch: string;
  project: string;
  /** The release folder's SHA256SUMS. */
  sums: string;
  files: string[];
  client: { client_id: string; client_secret: string };
}

/**
 * Makes a release folder (`npm run release`: the tarball and the executable, checked against SHA256SUMS), installs its
 * tarball into a new project, and sets up a database there with the installed CLI.
 */
function packAndInstall(): Installed {
  const scratch = mkdtempSync(join(tmpdir(), "fieldgate-package-"));
  const release = join(scratch, "release");
  run(join(NODE24_DIR, "node"), ["scripts/release.ts", "--out", release], { cwd: ROOT });
  run("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: release });
  const tarball = join(release, `fieldgate-${VERSION}.tgz`);
  const listed = run("tar", ["-tzf", tarball], { cwd: release }).stdout;
  const files = listed.trim().split("\n").map((path) => path.replace(/^package\//, ""));
  const project = join(scratch, "project");
  mkdirSync(join(project, "data"), { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "embedder", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: project });
  const cli = (...args: string[]) => run("npx", ["fieldgate", ...args, "--db", "data/fieldgate.db", "--json"], { cwd: project });
  cli("users", "add", "--username", "robot@example.com", "--integration", "--org", "acme");
  cli("fields", "import", "--org", "acme", "node_modules/fieldgate/data/demo-fields.geojson");
  const client = JSON.parse(cli(
    "clients", "add", "--name", "sync", "--grant", "client_credentials",
    "--integration-user", "robot@example.com", "--scope", "fields:read",
  ).stdout);
  // The executable (120 MiB) has its own test file; only its checksum line matters here.
  rmSync(join(release, `fieldgate-${VERSION}-${process.platform}-${process.arch}`));
  return { scratch, project, sums: readFileSync(join(release, "SHA256SUMS"), "utf8"), files, client };
}

/** The cached Node 22, installed on first use. */
function node22Dir(): string {
  const bin = join(NODE22_PREFIX, "node_modules/node/bin");
  if (!existsSync(join(bin, "node"))) {
    mkdirSync(NODE22_PREFIX, { recursive: true });
    run("npm", ["install", "--no-audit", "--no-fund", "--prefix", NODE22_PREFIX, `node@${NODE22}`], { cwd: NODE22_PREFIX });
  }
  return bin;
}

/** A new directory in the project, holding a copy of its database: each test works on its own. */
function workDir(installed: Installed): string {
  const dir = mkdtempSync(join(installed.project, "work-"));
  mkdirSync(join(dir, "data"));
  copyFileSync(join(installed.project, "data/fieldgate.db"), join(dir, "data/fieldgate.db"));
  return dir;
}

function lastJsonLine(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
}

const EXPECTED = { status: 200, token_type: "Bearer", result: { data: { fields: { total_count: 8 } } } };

// Registered under Node's runner only (npm run test:node): one run covers every runtime, as it starts Node 24, Node 22
// and Deno itself, and a second would only pack twice. Under c8 (npm run coverage) it would measure dist/, not src/.
if (!("Deno" in globalThis) && process.env.NODE_V8_COVERAGE === undefined) {
  let installed: Installed;
  before(() => void (installed = packAndInstall()), { timeout: 4 * STEP_TIMEOUT_MS });
  after(() => void (installed && rmSync(installed.scratch, { recursive: true, force: true })));

  test("the release folder's SHA256SUMS names the tarball and the executable (checked with sha256sum --check)", () => {
    const names = installed.sums.trim().split("\n").map((line) => line.split("  ")[1]).sort();
    assert.deepEqual(names, [`fieldgate-${VERSION}-${process.platform}-${process.arch}`, `fieldgate-${VERSION}.tgz`]);
  });

  test("the tarball holds dist/, the demo data, docs, the README and the licence, and no sources, tests, benchmark or scripts", () => {
    for (const path of ["dist/mod.js", "dist/mod.d.ts", "dist/mod.js.map", "dist/adapters/node_bin.js", "data/demo-fields.geojson", "README.md", "CHANGELOG.md", "LICENSE", "docs/operations.md"]) {
      assert.ok(installed.files.includes(path), path);
    }
    const stray = installed.files.filter((path) => !/^(dist\/|docs\/|data\/demo-fields\.geojson$|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(path));
    assert.deepEqual(stray, []);
    assert.ok(!installed.files.some((path) => path.endsWith(".ts") && !path.endsWith(".d.ts")), "no TypeScript sources");
  });

  test("the README's embedding snippet issues a token and reads total_count from the installed package on Node 24", () => {
    const dir = workDir(installed);
    writeFileSync(join(dir, "embed.mjs"), embeddingScript(installed.client, "fieldgate"));
    assert.deepEqual(lastJsonLine(run("node", ["embed.mjs"], { cwd: dir }).stdout), EXPECTED);
  });

  test(`the README's embedding snippet issues a token and reads total_count from the installed package on Node ${NODE22}`, () => {
    const dir = workDir(installed);
    const path = pathWith(node22Dir());
    assert.equal(run("node", ["--version"], { cwd: dir, path }).stdout.trim(), `v${NODE22}`);
    writeFileSync(join(dir, "embed.mjs"), embeddingScript(installed.client, "fieldgate"));
    assert.deepEqual(lastJsonLine(run("node", ["embed.mjs"], { cwd: dir, path }).stdout), EXPECTED);
  });

  test("the README's embedding snippet runs on Deno 2 from npm:fieldgate with the permissions the docs name", () => {
    const dir = workDir(installed);
    writeFileSync(join(dir, "embed.ts"), embeddingScript(installed.client, "npm:fieldgate"));
    assert.deepEqual(lastJsonLine(run(DENO, ["run", ...DENO_PERMISSIONS, "embed.ts"], { cwd: dir }).stdout), EXPECTED);
  });

  test("an imported bcrypt digest is checked on a worker thread from the installed package (its module is dist's .js)", () => {
    const dir = workDir(installed);
    // bcryptjs is a dependency of the package; the digest is PLAIN.alicePassword's from the Doorkeeper fixtures.
    writeFileSync(join(dir, "bcrypt.mjs"), `
import { createBcryptThreads, nodeThread } from "${join(installed.project, "node_modules/fieldgate/dist/adapters/bcrypt_threads.js")}";
const threads = createBcryptThreads(nodeThread);
const digest = ${JSON.stringify(DIGESTS.alice)};
console.log(JSON.stringify([await threads.verify(${JSON.stringify(PLAIN.alicePassword)}, digest), await threads.verify("wrong", digest)]));
await threads.close();
`);
    assert.deepEqual(lastJsonLine(run("node", ["bcrypt.mjs"], { cwd: dir }).stdout), [true, false]);
  });

  test("fieldgate/node_listener serves the app over node:http from the installed package on Node 24", () => {
    const dir = workDir(installed);
    writeFileSync(join(dir, "listen.mjs"), `${readmeSnippet()}
import { createServer } from "node:http";
import { toNodeListener } from "fieldgate/node_listener";
const server = createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = "http://127.0.0.1:" + server.address().port;
server.on("request", toNodeListener(app, origin));
const res = await fetch(origin + "/healthz");
console.log(JSON.stringify({ status: res.status, body: await res.json() }));
server.close();
maintenance.stop();
await app.close();
`);
    assert.deepEqual(lastJsonLine(run("node", ["listen.mjs"], { cwd: dir }).stdout), { status: 200, body: { status: "ok" } });
  });

  test("the README's embedding snippet type-checks against the package's declarations (types: dist/mod.d.ts)", () => {
    const dir = workDir(installed);
    writeFileSync(join(dir, "embed.ts"), `${readmeSnippet()}\nconst answer: Response = await app.fetch(new Request("https://auth.example.com/healthz"));\nexport {};\n`);
    // A strict NodeNext project with @types/node (the store's declarations name node:sqlite's types).
    const compilerOptions = {
      strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2023", lib: ["es2023", "dom"], noEmit: true,
      skipLibCheck: true, typeRoots: [join(ROOT, "node_modules/@types")], types: ["node"],
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["embed.ts"] }));
    run(join(NODE24_DIR, "node"), [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { cwd: dir });
  });

  test("npx fieldgate --version prints the package's version", () => {
    assert.equal(run("npx", ["fieldgate", "--version"], { cwd: installed.project }).stdout, `${VERSION}\n`);
  });

  for (const args of [[], ["start"]]) {
    test(`${["npx fieldgate", ...args].join(" ")} in a new directory serves the demo with its data under ./data`, async () => {
      const dir = mkdtempSync(join(installed.project, "serve-"));
      const env = { PATH: pathWith(NODE24_DIR), HOME: process.env.HOME ?? dir, PORT: "0", FIELDGATE_PBKDF2_ITERATIONS: "1000" };
      const server = startChildServer("npx", ["fieldgate", ...args], { cwd: dir, env });
      try {
        const url = await server.url;
        const res = await fetch(`${url}/healthz`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { status: "ok" });
      } finally {
        await server.stop();
      }
      assert.ok(existsSync(join(dir, "data/fieldgate.db")), "the database under ./data");
      const credentials = JSON.parse(readFileSync(join(dir, "data/demo-credentials.json"), "utf8"));
      assert.equal(credentials.fields, 8);
      assert.match(server.stdout(), /fieldgate demo data created/);
      assert.deepEqual(server.log().map((line) => line.event).slice(-2), ["shutting_down", "stopped"]);
    });
  }

  // The machine's own node (Debian's is 20), not the pinned one that npm's scripts put first on PATH.
  const systemPath = (process.env.PATH ?? "").split(":").filter((dir) => !dir.startsWith(ROOT)).join(":");
  const oldNode = ["/usr/bin/node", "/usr/local/bin/node", ...systemPath.split(":").map((dir) => join(dir, "node"))]
    .find((path) => findExecutable(path, "node") !== undefined);
  const oldVersion = oldNode && spawnSync(oldNode, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
  const [major = 0, minor = 0] = (oldVersion ?? "").split(".").map(Number);
  const tooOld = oldVersion !== undefined && (major < 22 || (major === 22 && minor < 23) || major === 23 || (major === 24 && minor < 21));
  const olderNode = requireComponent("a Node older than the package supports", () => (tooOld ? oldNode : undefined), "apt-get install nodejs");
  if (olderNode) test("on a Node older than engines names, npx fieldgate names the Node needed and the single executable", () => {
    const result = spawnSync("npx", ["fieldgate", "--version"], {
      cwd: installed.project,
      env: { ...process.env, PATH: `${dirname(olderNode)}:${systemPath}` },
      encoding: "utf8",
      timeout: STEP_TIMEOUT_MS,
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /needs Node 22\.23 or newer .*Node 24\.21 or newer \(this is v/);
    assert.match(result.stderr, /single executable/);
  });
}
