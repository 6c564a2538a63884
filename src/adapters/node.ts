// Node entry point: `node src/adapters/node.ts <command>`; argv and env go to the CLI, which also runs `serve`.
import { enableCompileCache } from "node:module";

// Caches the type-stripped and compiled modules (in the OS temp dir) before loading any of them: on a warm cache
// startup fell from ~0.32 s to ~0.19 s and RSS by ~30 MB, since the TypeScript stripper is then never loaded.
// The dynamic imports below are what let the cache cover the whole module graph.
enableCompileCache();

// `serve` is long-lived, and two V8 heap settings halve its memory at the same throughput (npm run bench):
// - a 2 MiB young generation (V8's default grows to 16 MiB per semi-space): peak RSS ~270 -> ~165 MiB;
// - a 256 MiB old-generation limit: V8 then grows the heap by its smallest factor between full collections
//   instead of up to 4x, so old garbage is collected sooner: peak RSS 160-172 -> 144-147 MiB. The live heap under
//   load is 20-40 MiB, so the limit leaves more than 6x headroom; past it the process stops with an out-of-memory
//   error rather than swapping.
// V8 reads them only at startup, so the process replaces itself once (same pid) with the flags added. A setting
// given explicitly (a flag or NODE_OPTIONS) is left alone, and a Node without process.execve (added in 23.11,
// still experimental) simply runs with V8's defaults.
const HEAP_FLAGS = [["--max-semi-space-size", "2"], ["--max-old-space-size", "256"]] as const;
const isSet = (flag: string) => process.execArgv.some((a) => a.startsWith(flag)) || !!process.env.NODE_OPTIONS?.includes(flag);
const missing = HEAP_FLAGS.filter(([flag]) => !isSet(flag)).map(([flag, value]) => `${flag}=${value}`);
if (typeof process.execve === "function" && process.argv[2] === "serve" && missing.length > 0) {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...missing, ...process.argv.slice(1)], process.env);
}
const { runCli } = await import("../cli/main.ts");
const { createNodeDeps, nodeIo } = await import("./serve_node.ts");
const { leavePool } = await import("./node_cluster.ts");

try {
  process.exitCode = await runCli(process.argv.slice(2), nodeIo(), createNodeDeps(process.env));
} catch (error) {
  // Not a usage error: something the operator must see in full (a port in use, an unreadable database).
  console.error(error instanceof Error ? `fieldgate: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  leavePool();
}
