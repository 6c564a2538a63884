// What `deno task start` and `deno task cli` run, read from deno.json, so the benchmark and the Deno tests start
// fieldgate exactly as a Deno user does (its permission and V8 flags included) instead of keeping a copy that could
// drift.
import { readFileSync } from "node:fs";

/**
 * The arguments of a deno.json task after the deno executable, e.g. ["run", "--allow-net", …, "src/adapters/deno.ts",
 * "serve"] for start.
 */
export function denoTaskArgs(root: URL | string, task: "start" | "cli"): ["run", ...string[]] {
  const config = JSON.parse(readFileSync(new URL("deno.json", root), "utf8")) as { tasks?: Record<string, string> };
  const line = config.tasks?.[task];
  if (!line) throw new Error(`deno.json has no ${task} task`);
  const [, ...args] = line.trim().split(/\s+/);
  if (args[0] !== "run" || !args.some((a) => a.endsWith("src/adapters/deno.ts"))) {
    throw new Error(`deno.json's ${task} task is not "<deno> run … src/adapters/deno.ts …": ${line}`);
  }
  return args as ["run", ...string[]];
}
