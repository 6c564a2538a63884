// Server child processes for the benchmark: free port, spawn, time to first answer, peak RSS, clean stop.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync, readdirSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface ServerProcess {
  pid: number;
  origin: string;
  /** Milliseconds from spawn until the first successful answer to `readyPath`. */
  firstResponseMs: number;
  /**
   * Peak resident set size so far (VmHWM), in MiB, summed over the process and its children (`serve --workers`
   * forks); NaN where /proc is unavailable.
   */
  peakRssMiB(): number;
  /** False once the process has exited (e.g. crashed under load). */
  alive(): boolean;
  /** The last lines the process wrote to its log file. */
  logTail(lines?: number): string;
  /** User + system CPU seconds the process and its live children have used so far; NaN where /proc is unavailable. */
  cpuSeconds(): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  /** Script and arguments after the executable (and its flags); `{port}` is replaced by the chosen port. */
  args: string[];
  /** The program to run; this Node by default. */
  executable?: string;
  /** Extra flags before `args`, e.g. Node's --cpu-prof or Deno's `run` and its permissions. */
  nodeFlags?: string[];
  env?: Record<string, string>;
  /** A GET that answers 2xx once the server is ready. */
  readyPath: string;
  /** File receiving the child's stdout and stderr (its request log). */
  logFile: string;
  timeoutMs?: number;
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Spawns `<executable> <flags> <args>` on a fresh port and polls `readyPath` until the first 2xx. */
export async function startServer(options: SpawnOptions): Promise<ServerProcess> {
  const port = await freePort();
  const args = options.args.map((a) => a.replaceAll("{port}", String(port)));
  const log = openSync(options.logFile, "a");
  const started = performance.now();
  const child = spawn(options.executable ?? process.execPath, [...(options.nodeFlags ?? []), ...args], {
    stdio: ["ignore", log, log],
    env: { ...process.env, ...options.env },
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitReady(child, origin + options.readyPath, options.timeoutMs ?? 15_000);
  } catch (error) {
    child.kill("SIGKILL");
    const tail = readFileSync(options.logFile, "utf8").split("\n").slice(-15).join("\n");
    throw new Error(`server did not start: ${(error as Error).message}\n${tail}`, { cause: error });
  }
  const firstResponseMs = performance.now() - started;
  const pid = child.pid!;
  return {
    pid,
    origin,
    firstResponseMs: Math.round(firstResponseMs),
    peakRssMiB: () => sum(processTree(pid).map(peakRss)),
    cpuSeconds: () => sum(processTree(pid).map(cpuSeconds)),
    alive: () => child.exitCode === null && child.signalCode === null,
    logTail: (lines = 10) => readFileSync(options.logFile, "utf8").split("\n").slice(-lines - 1).join("\n"),
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitReady(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    if (await probe(url)) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`no answer within ${timeoutMs} ms`);
}

function probe(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
    });
    req.once("error", () => resolve(false));
    req.setTimeout(1_000, () => req.destroy());
    req.end();
  });
}

/** User + system CPU seconds of `pid` and its descendants (a server not started here, such as PostgreSQL). */
export function treeCpuSeconds(pid: number): number {
  return sum(processTree(pid).map(cpuSeconds));
}

function peakRss(pid: number): number {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return Number.NaN;
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(file, "utf8"));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN;
}

// Clock ticks per second for /proc/<pid>/stat; 100 on every Linux configuration Node supports.
const CLK_TCK = 100;

function cpuSeconds(pid: number): number {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return Number.NaN;
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
  const line = readFileSync(file, "utf8");
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function sum(values: number[]): number {
  return Math.round(values.reduce((a, b) => a + b, 0) * 100) / 100;
}

/** `pid` and its descendants, from the parent pid in every /proc/<pid>/stat. */
function processTree(pid: number): number[] {
  if (!existsSync("/proc")) return [pid];
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const line = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(line.slice(line.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}
