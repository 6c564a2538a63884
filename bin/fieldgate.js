#!/usr/bin/env node
// The `fieldgate` bin: runs src/adapters/node.ts on a Node that can (type stripping and node:sqlite, Node >= 24),
// preferring the Node 24 pinned in node_modules, so it also works when the shell's node is older.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../src/adapters/node.ts", import.meta.url));
const major = Number(process.versions.node.split(".")[0]);

if (major >= 24) {
  // Enabled here, before the first .ts file loads, so a warm cache never loads the TypeScript stripper (~30 MB).
  (await import("node:module")).enableCompileCache?.();
  await import(new URL("../src/adapters/node.ts", import.meta.url).href);
} else {
  const pinned = fileURLToPath(new URL("../node_modules/.bin/node", import.meta.url));
  if (!existsSync(pinned)) {
    console.error(`fieldgate needs Node 24 or newer (this is ${process.version}); run npm install in the project first`);
    process.exit(1);
  }
  const child = spawn(pinned, [entry, ...process.argv.slice(2)], { stdio: "inherit" });
  // Forward shutdown signals so `serve` can finish in-flight requests and close the database.
  for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
