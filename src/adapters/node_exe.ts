// Entry of the single executable (`npm run build:exe`): the Node CLI, with the files the adapters read beside the
// sources (package.json's version, the demo's GeoJSON) taken from the executable's SEA assets instead of the disk.
// The bundle is CommonJS (what a SEA runs), so this entry has no top-level await.
import cluster from "node:cluster";
import { getAsset } from "node:sea";
import process from "node:process";
import { runCli } from "../cli/main.ts";
import type { CliDeps } from "../cli/types.ts";
import { createNodeDeps, nodeIo } from "./serve_node.ts";
import { leavePool } from "./node_cluster.ts";

/**
 * The scheme the bundler gives `import.meta.url` (scripts/build_exe.ts defines it as `fieldgate-exe:/src/<dir>/x.js`),
 * so a module-relative URL such as demo/seed.ts's `../../data/demo-fields.geojson` names the asset of that path.
 */
const ASSET_SCHEME = "fieldgate-exe:";

/** The SEA asset a module-relative URL names, or undefined for an ordinary path. */
function assetKey(path: string | URL): string | undefined {
  const url = typeof path === "string" ? (path.startsWith(ASSET_SCHEME) ? new URL(path) : undefined) : path;
  return url?.protocol === ASSET_SCHEME ? url.pathname.replace(/^\//, "") : undefined;
}

/** createNodeDeps with the version and the module-relative files read from the SEA assets. */
function executableDeps(env: Record<string, string | undefined>): CliDeps {
  const version = (JSON.parse(getAsset("package.json", "utf8")) as { version: string }).version;
  const deps = createNodeDeps(env, { version });
  const readFromDisk = deps.readTextFile;
  return {
    ...deps,
    readTextFile: async (path) => {
      const key = assetKey(path);
      return key === undefined ? readFromDisk(path) : getAsset(key, "utf8");
    },
  };
}

// `serve --workers`: node:cluster forks `execPath ...execArgv <script> ...args`, and the executable takes all of those as
// its own arguments. So the primary passes no execArgv (the executable applies its built-in ones itself) and a
// worker skips <script>.
if (cluster.isPrimary) cluster.setupPrimary({ execArgv: [] });
const args = process.argv.slice(cluster.isWorker ? 3 : 2);

runCli(args, nodeIo(), executableDeps(process.env))
  .then((code) => {
    process.exitCode = code;
  }, (error: unknown) => {
    // Not a usage error: something the operator must see in full (a port in use, an unreadable database).
    console.error(error instanceof Error ? `fieldgate: ${error.message}` : error);
    process.exitCode = 1;
  })
  .finally(leavePool);
