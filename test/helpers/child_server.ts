// A `fieldgate serve` started the way a user starts it (an installed bin through npx, the single executable), as a
// child process in a process group of its own: its log and stdout captured, its URL taken from the `listening` line.
import { spawn } from "node:child_process";
import process from "node:process";

export interface ChildServer {
  /** The `listening` line's url; rejects if the process exits before logging one. */
  url: Promise<string>;
  /** The JSON lines on stderr so far. */
  log(): Record<string, unknown>[];
  stdout(): string;
  stderr(): string;
  /** SIGTERM to the whole group (npx does not pass it on); resolves with "code signal" once every process in it ended. */
  stop(): Promise<string>;
}

/** Starts `command args` in `cwd` with exactly `env`; the caller stops it. */
export function startChildServer(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): ChildServer {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  // "close", not "exit": it waits for every process holding the pipes, so npx's own child has finished too.
  const exited = new Promise<string>((resolve) => child.on("close", (code, signal) => resolve(`${code} ${signal}`)));
  const log = () =>
    stderr.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      const listening = log().find((line) => line.event === "listening");
      if (listening) resolve(String(listening.url));
    });
    void exited.then((how) => reject(new Error(`${command} exited (${how}) before listening: ${stderr}${stdout}`)));
  });
  url.catch(() => {}); // awaited by the test; an unawaited rejection must not end the test process
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  return {
    url,
    log,
    stdout: () => stdout,
    stderr: () => stderr,
    stop() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, "SIGTERM");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
        }
      }
      return exited;
    },
  };
}
