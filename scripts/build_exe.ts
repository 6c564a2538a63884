// `npm run build:exe [-- --out PATH]`: the single executable (Node's single executable applications). esbuild bundles
// src/adapters/node_exe.ts and every dependency into one CommonJS file, Node turns it and the assets into a blob,
// postject injects that into a copy of this Node binary. Cached by a digest of everything that goes in.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "fieldgate-exe");
/** The files the executable reads as SEA assets; node_exe.ts maps module-relative URLs onto these keys. */
const ASSETS = ["package.json", "data/demo-fields.geojson"];
/** Node's documented sentinel for the SEA blob (the fuse postject flips in the copied binary). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** Every file under src/, the assets, the lockfile, this script and the Node binary's version: what the output depends on. */
function inputDigest(): string {
  const hash = createHash("sha256").update(process.version);
  const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .map((path) => join("src", path))
    .filter((path) => statSync(join(ROOT, path)).isFile())
    .sort();
  for (const path of [...sources, ...ASSETS, "package-lock.json", "scripts/build_exe.ts"]) {
    hash.update(`${path}\0`).update(readFileSync(join(ROOT, path))).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: "inherit" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`);
}

/**
 * Modules the sources start as worker threads by URL: `new URL("./x.ts", import.meta.url)`, or with the extension
 * the naming module has (`./x${EXTENSION}`, so the built package's .js finds its .js sibling). The executable has no
 * files beside it, so each is bundled on its own and its URL replaced by a data: URL of that bundle, which Node's
 * Worker runs as an ES module.
 */
const WORKER_MODULES = ["src/store/sqlite/checkpoint_worker.ts", "src/adapters/bcrypt_thread.ts"];

const WORKER_URL = /new URL\((["`])\.\/(\w+)(?:\.ts|\$\{\w+\})\1, import\.meta\.url\)/g;

/** The esbuild plugin that puts each of WORKER_MODULES, bundled, in place of the URL that names it. */
function workerModules(bundle: typeof import("esbuild").build): import("esbuild").Plugin {
  const workers = new Set(WORKER_MODULES.map((path) => join(ROOT, path)));
  const dataUrl = async (path: string): Promise<string> => {
    const out = await bundle({ entryPoints: [path], bundle: true, platform: "node", format: "esm", target: "node24", write: false });
    return `data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.contents).toString("base64")}`;
  };
  return {
    name: "worker-modules",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
        const source = readFileSync(path, "utf8");
        const target = (m: RegExpMatchArray) => resolve(dirname(path), `${m[2]!}.ts`);
        const named = [...source.matchAll(WORKER_URL)].filter((m) => workers.has(target(m)));
        if (named.length === 0) return undefined;
        let contents = source;
        for (const m of named) contents = contents.replace(m[0], `new URL(${JSON.stringify(await dataUrl(target(m)))})`);
        return { contents, loader: "ts" };
      });
    },
  };
}

/** Builds the executable into `dir`/fieldgate. */
async function build(dir: string): Promise<void> {
  const { build: bundle } = await import("esbuild");
  const main = join(dir, "fieldgate.cjs");
  await bundle({
    entryPoints: [join(ROOT, "src/adapters/node_exe.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    outfile: main,
    logLevel: "warning",
    // One value for every module: each use resolves a path two levels below the root (demo/seed.ts's demo data).
    define: { "import.meta.url": JSON.stringify("fieldgate-exe:/src/module/bundle.js") },
    plugins: [workerModules(bundle)],
  });
  const blob = join(dir, "sea.blob");
  const config = {
    main,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    // npm start's heap limits (docs/operations.md, Memory), which a self-hoster could not pass to the executable.
    execArgv: ["--max-semi-space-size=2", "--max-old-space-size=256"],
    assets: Object.fromEntries(ASSETS.map((key) => [key, join(ROOT, key)])),
  };
  writeFileSync(join(dir, "sea-config.json"), JSON.stringify(config));
  run(process.execPath, ["--experimental-sea-config", join(dir, "sea-config.json")]);
  const exe = join(dir, "fieldgate");
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  // postject ships CommonJS without declarations.
  const { inject } = createRequire(import.meta.url)("postject") as { inject: (f: string, n: string, d: Buffer, o: object) => Promise<void> };
  await inject(exe, "NODE_SEA_BLOB", readFileSync(blob), { sentinelFuse: SEA_FUSE });
  for (const name of ["fieldgate.cjs", "sea.blob", "sea-config.json"]) rmSync(join(dir, name));
}

/** The executable for the current sources: from the cache when they have not changed, else built and cached. */
export async function buildExecutable(): Promise<{ path: string; cached: boolean }> {
  const key = inputDigest();
  const cached = join(CACHE, key);
  const path = join(cached, "fieldgate");
  if (existsSync(path)) return { path, cached: true };
  mkdirSync(CACHE, { recursive: true });
  // Built aside and renamed into place, so a concurrent or interrupted build never leaves half a binary cached.
  const scratch = mkdtempSync(join(CACHE, "build-"));
  try {
    await build(scratch);
    // Only the newest build is kept: each one is the size of a Node binary.
    for (const old of readdirSync(CACHE)) {
      if (!old.startsWith("build-") && old !== key) rmSync(join(CACHE, old), { recursive: true, force: true });
    }
    try {
      renameSync(scratch, cached);
    } catch (error) {
      // A concurrent build of the same sources got there first; its file is the same.
      if (!existsSync(path)) throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { path, cached: false };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string", default: "build/fieldgate" } } });
  const started = performance.now();
  const { path, cached } = await buildExecutable();
  const out = resolve(values.out!);
  mkdirSync(dirname(out), { recursive: true });
  copyFileSync(path, out);
  chmodSync(out, 0o755);
  const mb = (statSync(out).size / 2 ** 20).toFixed(1);
  console.log(`${out}: ${mb} MiB, ${cached ? "from the cache" : `built in ${((performance.now() - started) / 1000).toFixed(1)} s`}`);
}
