// Reading src/ as text, for the tests that enforce rules on its imports mechanically.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every .ts file below `dir`, recursively. */
export function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** `source` without block and line comments, so a rule is checked against code only. */
export function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}
