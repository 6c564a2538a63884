/**
 * A throwaway PostgreSQL cluster on 127.0.0.1 in a private temp directory, for the tests and the benchmark: found
 * from the installed binaries, started with the caller's settings, stopped and removed when this process ends,
 * however it ends.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A directory with initdb and pg_ctl: FIELDGATE_TEST_PG_BIN when set (a directory without them counts as "not
 * installed", which is how a test run hides PostgreSQL), else the first on PATH, else Debian's
 * /usr/lib/postgresql/<version>/bin, newest first. Undefined when there is none.
 */
export function findPostgresBinaries(env: Record<string, string | undefined> = process.env): string | undefined {
  const candidates = env.FIELDGATE_TEST_PG_BIN !== undefined
    ? [env.FIELDGATE_TEST_PG_BIN]
    : [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...debianBinDirs()];
  return candidates.find((c) => existsSync(join(c, "initdb")) && existsSync(join(c, "pg_ctl")));
}

/** Debian's versioned directories (initdb is not on PATH there), newest first. */
function debianBinDirs(): string[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root).sort((a, b) => Number(b) - Number(a)).map((version) => join(root, version, "bin"));
}

/** A running throwaway cluster. */
export interface PostgresCluster {
  /** The superuser's URL: postgres://postgres@127.0.0.1:<port>/postgres. */
  url: string;
  /** The postmaster's process id, whose children are every backend: for measuring the server's CPU time. */
  pid(): number | undefined;
  /** Stops the server as an operator's `pg_ctl stop -m fast` does, keeping its data: for outage tests. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port. */
  resume(): Promise<void>;
  /**
   * Runs `script` (statements each ending in a semicolon and a blank line) in a single-user backend on the halted
   * cluster, under the command prefix `wrapper` (valgrind's, to count instructions): for bench/pg_instructions.ts.
   * `wrapper` gets the cluster's private directory, which the server's user may write to and which goes with it.
   */
  singleUser(script: string, wrapper: (dir: string) => string[]): { status: number | null; output: string };
}

const asRoot = process.getuid?.() === 0;

/**
 * Runs a PostgreSQL program from `binDir`, after the command prefix `wrapper` if any; as root through runuser, since
 * initdb and postgres refuse root.
 */
function pgCommand(binDir: string, program: string, args: string[], wrapper: string[] = []): [string, string[]] {
  const argv = [...wrapper, join(binDir, program), ...args];
  return asRoot ? ["runuser", ["-u", "postgres", "--", ...argv]] : [argv[0]!, argv.slice(1)];
}

/**
 * Creates and starts a cluster with `settings` (server parameters, as `-c name=value`), on a free port. It is stopped
 * and its directory removed when this process exits, or shortly after it is killed.
 */
export async function startPostgresCluster(
  binDir: string,
  options: { settings?: Record<string, string>; purpose: string },
): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const [uid, gid] = ["-u", "-g"].map((flag) => Number(spawnSync("id", [flag, "postgres"]).stdout.toString()));
    chownSync(dir, uid!, gid!);
  }
  const stop = () => {
    const [command, args] = pgCommand(binDir, "pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
    if (existsSync(join(data, "postmaster.pid"))) spawnSync(command, args, { cwd: dir, stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  stopAtExit(stop);
  watchForKill(binDir, dir, data);
  const exec = (program: string, args: string[]) => {
    const [command, argv] = pgCommand(binDir, program, args);
    return run(command, argv, { cwd: dir });
  };
  // trust: only this machine's 127.0.0.1 and the socket in the private temp directory reach it, for one run.
  await exec("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]);
  const extra = Object.entries(options.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`).join(" ");
  for (let attempt = 1;; attempt++) {
    const port = await freePort();
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${extra}`;
    try {
      const start = () => exec("pg_ctl", ["start", "-D", data, "-l", join(dir, "log"), "-w", "-t", "30", "-o", settings]);
      await start();
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        pid: () => postmasterPid(data),
        halt: async () => void await exec("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w"]),
        resume: async () => void await start(),
        singleUser(script, wrapper) {
          const [command, argv] = pgCommand(binDir, "postgres", ["--single", "-j", "-D", data, "postgres"], wrapper(dir));
          const done = spawnSync(command, argv, { cwd: dir, input: script, maxBuffer: 1 << 30 });
          return { status: done.status, output: `${done.stdout}${done.stderr}` };
        },
      };
    } catch (error) {
      // Another process may have taken the port between freePort() and the server's bind: try another one.
      if (attempt >= 3) {
        const log = existsSync(join(dir, "log")) ? readFileSync(join(dir, "log"), "utf8") : "";
        throw new Error(`cannot start the ${options.purpose} PostgreSQL cluster in ${dir}: ${log}`, { cause: error });
      }
    }
  }
}

/** The first line of postmaster.pid, while the server runs. */
function postmasterPid(data: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined; // not running (or not readable as this user): the caller reports no figure
  }
}

/** A port that was free a moment ago, from the kernel. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(
        () => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))),
      );
    });
  });
}

/** Runs `stop` once when the process exits normally (Node's "exit" and Deno's "unload" both fire it). */
function stopAtExit(stop: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    stop();
  };
  process.on("exit", once);
  globalThis.addEventListener?.("unload", once);
}

/**
 * A detached shell that stops the cluster when this process is gone however it went (a test runner's timeout kill,
 * SIGKILL), when no exit hook runs: no postgres process may outlive its run.
 */
function watchForKill(binDir: string, dir: string, data: string): void {
  const [command, args] = pgCommand(binDir, "pg_ctl", ["stop", "-D", data, "-m", "immediate"]);
  const quoted = [command, ...args].map((a) => `'${a}'`).join(" ");
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ` +
    `[ -f '${data}/postmaster.pid' ] && ${quoted} >/dev/null 2>&1; rm -rf '${dir}'`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}
