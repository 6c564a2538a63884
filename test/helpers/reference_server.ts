// A benchmark reference server (bench/references*.ts) started for a test: it prints "listening on URL" when ready.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const NODE = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));

/** Runs `node script args…`, hands `check` the origin it announces, then stops it and expects a clean exit. */
export async function withReferenceServer(script: string, args: string[], check: (origin: string) => Promise<void>): Promise<void> {
  const child = spawn(NODE, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once("exit", () => reject(new Error(`${script} ${args.join(" ")} exited before listening`)));
    });
    await check(origin);
  } finally {
    process.kill(child.pid!, "SIGTERM");
  }
  assert.equal(await exited, 0);
}
