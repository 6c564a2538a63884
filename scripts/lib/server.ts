// Runs the real fieldgate server as a child process on loopback, for the crash and soak scripts.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface RunningServer {
  base: string;
  child: ChildProcess;
  /** Every stdout and stderr byte the process wrote, for secret scans and diagnostics. */
  output: () => string;
  /** SIGKILL: no shutdown hook, no final checkpoint, exactly like a crash. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, so a restarted server can keep the same address. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

// The heap settings of package.json's start script (docs/operations.md, "Memory"); a caller's NODE_OPTIONS comes
// after them, and V8 takes the last value of a flag.
const HEAP_FLAGS = "--max-semi-space-size=2 --max-old-space-size=256";

/** Starts `node src/adapters/node.ts serve --port P --db FILE`, as npm start does, and waits until /healthz answers. */
export async function startServer(options: { port: number; db: string; env?: Record<string, string> }): Promise<RunningServer> {
  const nodeOptions = [HEAP_FLAGS, options.env?.NODE_OPTIONS ?? process.env.NODE_OPTIONS].filter(Boolean).join(" ");
  const child = spawn(process.execPath, ["src/adapters/node.ts", "serve", "--port", String(options.port), "--db", options.db], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", ...options.env, NODE_OPTIONS: nodeOptions },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("latin1")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("latin1")));
  const base = `http://127.0.0.1:${options.port}`;
  const exited = once(child, "exit");
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`server did not become healthy:\n${output}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    base,
    child,
    output: () => output,
    async kill9() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
