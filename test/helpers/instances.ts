/**
 * Several `serve` processes on 127.0.0.1 sharing one PostgreSQL database, as instances behind a load balancer run,
 * and the CLI run against the same database: for tests of what instances must agree on. Each process is started as
 * its runtime's user starts it (node src/adapters/node.ts serve, or what `deno task start` runs under Deno).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import process from "node:process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { denoTaskArgs } from "../../scripts/lib/deno_tasks.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const onDeno = "Deno" in globalThis;

/** The public base URL every instance shares, as behind one load balancer; loopback, so plain HTTP is not warned of. */
export const SHARED_BASE_URL = "http://localhost:8080";

/** Bound of one HTTP request in these tests: a hung instance fails the request, not the whole test's time. */
export const REQUEST_TIMEOUT_MS = 10_000;

/**
 * What every instance and CLI run gets: the shared database (a postgres:// URL, or a SQLite file, which processes on
 * one machine can share too), no demo, fast PBKDF2 for seeded passwords.
 */
function baseEnv(database: string): Record<string, string | undefined> {
  const postgres = /^postgres(ql)?:\/\//i.test(database);
  return {
    ...process.env,
    // The test runner's own marker would make a child node:test-aware.
    NODE_TEST_CONTEXT: undefined,
    FIELDGATE_DB: postgres ? undefined : database,
    FIELDGATE_DATABASE_URL: postgres ? database : undefined,
    FIELDGATE_DEMO: "false",
    FIELDGATE_PBKDF2_ITERATIONS: "1000",
    FIELDGATE_BASE_URL: SHARED_BASE_URL,
    NO_COLOR: "1",
  };
}

/** One running `serve` process. */
export interface Instance {
  name: string;
  /** http://127.0.0.1:<port> */
  origin: string;
  pid: number;
  alive(): boolean;
  /** Its log so far (the tail, when long), for failure messages. */
  output(): string;
  /** SIGKILL: no shutdown, no draining; its database sessions end with the lost connections. */
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL after a bound; resolves once it exited. */
  stop(): Promise<void>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI against one database. */
export interface Cli {
  /** Runs `fieldgate <args> --db <database>` in a process of its own; `stdin` is written to it. */
  cli(args: string[], options?: { stdin?: string }): Promise<CliResult>;
  /** The same with --json, parsed; throws with its stderr when it failed. */
  cliJson(args: string[], options?: { stdin?: string }): Promise<Record<string, unknown>>;
}

export interface Instances extends Cli {
  all: Instance[];
  /** Stops every instance still running. */
  close(): Promise<void>;
}

/**
 * The CLI against `database` with the instances' settings, each command a process of its own, as an operator runs it
 * beside running instances. It runs in the temp directory: with a URL or an absolute path it writes nothing there.
 */
export function fieldgateCli(database: string, options: { env?: Record<string, string>; cwd?: string } = {}): Cli {
  const at = { env: definedOnly({ ...baseEnv(database), ...options.env }), cwd: options.cwd ?? tmpdir() };
  const cli = (args: string[], cliOptions: { stdin?: string } = {}) =>
    runCli([...args, "--db", database], at, cliOptions.stdin ?? "");
  return {
    cli,
    async cliJson(args, cliOptions) {
      const result = await cli([...args, "--json"], cliOptions);
      if (result.code !== 0) throw new Error(`fieldgate ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    },
  };
}

/** Starts `count` instances at once (they migrate the empty database together) and waits until each answers. */
export async function startInstances(
  database: string,
  options: { count?: number; env?: Record<string, string> } = {},
): Promise<Instances> {
  const names = ["A", "B", "C", "D", "E"].slice(0, options.count ?? 3);
  const env = definedOnly({ ...baseEnv(database), ...options.env });
  const cwd = mkdtempSync(join(tmpdir(), "fieldgate-instances-"));
  const started = await Promise.allSettled(names.map((name) => startInstance(name, env, cwd)));
  const all = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const close = async () => {
    await Promise.all(all.map((i) => i.stop()));
    rmSync(cwd, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await close();
    throw (failed as PromiseRejectedResult).reason;
  }
  return { all, ...fieldgateCli(database, { env: options.env, cwd }), close };
}

/** `env` without its unset entries, which a runtime might otherwise pass as the text "undefined". */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * The program and arguments that run fieldgate's `args` ("serve …" or a CLI command) on this runtime. The entry point
 * is absolute: the processes run in a directory of their own, so nothing they might create lands in the checkout.
 */
function fieldgateCommand(args: string[], task: "start" | "cli"): [string, string[]] {
  if (!onDeno) return [process.execPath, [join(ROOT, "src/adapters/node.ts"), ...args]];
  // deno task start ends in "serve", deno task cli in the entry point; both take the command's arguments after it.
  const base = denoTaskArgs(new URL("../../", import.meta.url), task)
    .map((arg) => (arg.endsWith("src/adapters/deno.ts") ? join(ROOT, arg) : arg));
  return [process.execPath, task === "start" ? [...base, ...args.slice(1)] : [...base, ...args]];
}

/** Characters kept of an instance's log: enough for a failure message, bounded under a load of request log lines. */
const KEPT_OUTPUT = 200_000;

async function startInstance(name: string, env: Record<string, string>, cwd: string): Promise<Instance> {
  const [command, args] = fieldgateCommand(["serve", "--host", "127.0.0.1", "--port", "0"], "start");
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  guardAgainstOrphan(child);
  let output = "";
  let origin: string | undefined;
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-KEPT_OUTPUT);
    // serve logs one JSON line {"event":"listening","url":…} once the app answers on the bound port.
    origin ??= /"event":"listening"[^\n]*?"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1];
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const exited = once(child, "exit");
  const alive = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + 30_000;
  while (origin === undefined) {
    if (!alive()) throw new Error(`instance ${name} exited before listening:\n${output}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`instance ${name} did not listen within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const instance: Instance = {
    name,
    origin,
    pid: child.pid!,
    alive,
    output: () => output,
    async kill9() {
      if (alive()) child.kill("SIGKILL");
      await exitedOf(child, exited);
    },
    async stop() {
      if (!alive()) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exitedOf(child, exited);
      clearTimeout(timer);
    },
  };
  return instance;
}

function exitedOf(child: ChildProcess, exited: Promise<unknown>): Promise<unknown> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : exited;
}

/**
 * A detached shell that kills the instance once this test process is gone however it went (a runner's timeout kill,
 * SIGKILL), when no cleanup of ours runs: no server may outlive the test run.
 */
function guardAgainstOrphan(child: ChildProcess): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${child.pid} 2>/dev/null; do sleep 0.5; done; ` +
    `kill -9 ${child.pid} 2>/dev/null`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}

function runCli(args: string[], at: { env: Record<string, string>; cwd: string }, stdin: string): Promise<CliResult> {
  const [command, argv] = fieldgateCommand(args, "cli");
  const child = spawn(command, argv, { cwd: at.cwd, env: at.env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin!.end(stdin);
  // A CLI command takes well under a second; the bound turns a hung one into a failure that names it.
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A POST with a JSON body to one instance, bounded in time; the status and the parsed body (undefined if not JSON). */
export async function postJson(
  origin: string,
  path: string,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> | undefined; headers: Headers }> {
  const response = await fetch(origin + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: response.status, json, headers: response.headers };
}

/** A bearer request for the field count on one instance: the status, and the count when it answered 200. */
export async function countFields(origin: string, accessToken: string): Promise<{ status: number; total?: number }> {
  const response = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ query: "{ fields { total_count } }" }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = await response.json() as { data?: { fields?: { total_count?: number } } };
  return { status: response.status, total: body.data?.fields?.total_count };
}
