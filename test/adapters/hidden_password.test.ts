// `users add --password-stdin` at a terminal: a prompt, no echo, Backspace works, Ctrl-C cancels (Node and Deno).
// A real pseudo-terminal comes from util-linux `script`, which also prints what the terminal would show.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { denoTaskArgs } from "../../scripts/lib/deno_tasks.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RUNTIMES = [
  { name: "Node", command: "node_modules/.bin/node src/adapters/node.ts" },
  // What `deno task cli` runs, with its permissions; --quiet keeps Deno's own messages off the terminal.
  { name: "Deno", command: denoCliCommand() },
];

/** The command line `deno task cli` runs (deno.json), plus --quiet. */
function denoCliCommand(): string {
  const [run, ...rest] = denoTaskArgs(new URL("../../", import.meta.url), "cli");
  return ["node_modules/.bin/deno", run, "--quiet", ...rest].join(" ");
}

const PROMPT = "Password (at least 10 characters, not shown; Enter to finish): ";

/**
 * Runs `users add` under a pseudo-terminal, types `keys` once the prompt shows, and returns the transcript.
 * `then` runs in the same terminal after the CLI ends (to read its settings); `signal` is sent to the CLI instead
 * of typing.
 */
function typeAtTerminal(
  command: string,
  keys: string,
  options: { then?: string; signal?: NodeJS.Signals } = {},
): Promise<{ code: number | null; screen: string }> {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-tty-"));
  const db = join(dir, "t.db");
  const cli = `${command} users add --username alice@example.com --password-stdin --org acme --db ${db}`;
  const script = options.then ? `sh -c '${cli}; ${options.then}'` : cli;
  const child = spawn("script", ["-qfec", script, "/dev/null"], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
  let screen = "";
  let typed = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no exit within 20 s; screen so far: ${JSON.stringify(screen)}`));
    }, 20_000);
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString("utf8");
      if (!typed && screen.includes(PROMPT)) {
        typed = true;
        child.stdin.write(keys);
        // The CLI is the newest process whose command line names this test's database (script and sh name it too).
        if (options.signal) spawn("pkill", ["-n", `-${options.signal.slice(3)}`, "-f", `db ${db}`]);
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, screen });
    });
  });
}

for (const runtime of RUNTIMES) {
  test(`users add --password-stdin on a terminal (${runtime.name}) prompts and hides the password`, async () => {
    const { code, screen } = await typeAtTerminal(runtime.command, "correct horse battery\r");
    assert.equal(code, 0, screen);
    assert.ok(screen.includes(PROMPT), screen);
    assert.ok(!screen.includes("correct horse"), `the password was echoed: ${JSON.stringify(screen)}`);
    assert.match(screen, /alice@example\.com/);
  });

  test(`users add --password-stdin on a terminal (${runtime.name}) applies Backspace before checking the password`, async () => {
    // Ten characters typed, two erased: eight remain, which the length rule refuses.
    const { code, screen } = await typeAtTerminal(runtime.command, "123456789X\x7f\x7f\r");
    assert.equal(code, 2, screen);
    assert.match(screen, /at least 10/);
  });

  test(`users add --password-stdin on a terminal (${runtime.name}) is cancelled by Ctrl-C with exit 2`, async () => {
    const { code, screen } = await typeAtTerminal(runtime.command, "half typed\x03");
    assert.equal(code, 2, screen);
    assert.match(screen, /password entry cancelled/);
    assert.ok(!screen.includes("half typed"));
  });

  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT"] as const) {
    test(`users add --password-stdin on a terminal (${runtime.name}) gives the terminal its echo back when killed by ${signal}`, async () => {
      const { screen } = await typeAtTerminal(runtime.command, "half", { signal, then: "stty -a" });
      // stty lists the echo flag as "echo" when on and "-echo" when off.
      assert.match(screen, /(^|\s)echo(\s|$)/m, screen);
      assert.doesNotMatch(screen, /(^|\s)-echo(\s|$)/m);
    });
  }
}
