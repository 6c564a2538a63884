// Every test file takes `test` from helpers/bounded.ts, so every test has a time bound on both runtimes and a
// regression that hangs fails with its name instead of stalling the suite.
import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const TEST_DIR = new URL("./", import.meta.url).pathname;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

test("no test file takes test() from node:test directly, bypassing the per-test bound", () => {
  const offenders = walk(TEST_DIR)
    .filter((file) => !file.endsWith("helpers/bounded.ts"))
    .filter((file) => /import\s*\{[^}]*\btest\b[^}]*\}\s*from\s*["']node:test["']/.test(readFileSync(file, "utf8")))
    .map((file) => relative(TEST_DIR, file));
  assert.deepEqual(offenders, []);
});
