// A machine without Chromium: the browser tests are reported once as not run and the run passes, unless CI=true.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { findExecutable } from "../helpers/system_component.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NOT_RUN = "Chromium not found, so the tests that need it did not run (apt-get install chromium, or set CHROMIUM_PATH";

/** Runs test/e2e/browser.test.ts under this runtime's own test runner, with no usable Chromium. */
function runBrowserTests(env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const args = "Deno" in globalThis
    ? ["test", "--allow-all", "--no-check", "test/e2e/browser.test.ts"]
    : ["--test", "test/e2e/browser.test.ts"];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // NODE_TEST_CONTEXT would make the child node:test treat itself as nested in this run, and run nothing.
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, NO_COLOR: "1", CHROMIUM_PATH: "/nonexistent/chromium", ...env },
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  // The bound of the run, not a speed claim: it takes seconds, and a browser test that waits for a browser that is
  // not there must fail this test rather than hang the suite.
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) => child.on("close", (code) => {
    clearTimeout(timer);
    resolve({ code, output });
  }));
}

test("without Chromium the browser tests are reported once as not run, saying how to install it, and the run passes", async () => {
  const { code, output } = await runBrowserTests({ CI: undefined });
  assert.equal(code, 0, output);
  assert.equal(output.split(NOT_RUN).length - 1, 1, output);
  assert.doesNotMatch(output, /browser: /, "no browser test was registered");
});

test("without Chromium under CI=true the run fails, saying what is missing and how to install it", async () => {
  const { code, output } = await runBrowserTests({ CI: "true" });
  assert.notEqual(code, 0, output);
  assert.match(output, /Chromium is required under CI=true/);
  assert.ok(output.includes(NOT_RUN), output);
});

test("findExecutable takes only an executable file: the override alone when set, else the first on PATH", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-exe-"));
  const program = join(dir, "chromium");
  writeFileSync(program, "#!/bin/sh\n");
  chmodSync(program, 0o644);
  assert.equal(findExecutable(program, "chromium"), undefined, "not executable");
  chmodSync(program, 0o755);
  assert.equal(findExecutable(program, "chromium"), program);
  // What the fresh-machine check leaves of a hidden binary (a bind-mounted /dev/null), a directory, nothing at all.
  for (const path of ["/dev/null", dir, join(dir, "missing")]) assert.equal(findExecutable(path, "chromium"), undefined, path);
  const path = process.env.PATH;
  try {
    process.env.PATH = ["/nonexistent", dir].join(":");
    assert.equal(findExecutable(undefined, "chromium"), program);
    assert.equal(findExecutable(join(dir, "other"), "chromium"), undefined, "a set override is never passed over");
  } finally {
    process.env.PATH = path;
  }
});
