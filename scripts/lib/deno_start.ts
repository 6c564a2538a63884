// What `deno task start` runs, read from deno.json, so the benchmark and the Deno smoke tests start the server
// exactly as a Deno user does (its permission and V8 flags included) instead of keeping a copy that could drift.
import { readFileSync } from "node:fs";

/** The arguments of the start task after the deno executable, e.g. ["run", "--allow-all", "--v8-flags=…", "src/…", "serve"]. */
export function denoStartArgs(root: URL | string): string[] {
  const config = JSON.parse(readFileSync(new URL("deno.json", root), "utf8")) as { tasks?: Record<string, string> };
  const task = config.tasks?.start;
  if (!task) throw new Error("deno.json has no start task");
  const [, ...args] = task.trim().split(/\s+/);
  if (args[0] !== "run" || !args.includes("serve")) throw new Error(`deno.json's start task is not "<deno> run … serve": ${task}`);
  return args;
}
