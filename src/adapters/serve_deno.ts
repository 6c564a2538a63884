// Deno runtime services for the CLI and server: Deno.serve, signal listeners, files, stdio.
import type { App } from "../app.ts";
import { systemClock, type Log } from "../deps.ts";
import { cannotListen, SHUTDOWN_SIGNALS, UsageError, type CliDeps, type CliIo, type Listener, type ListenOptions } from "../cli/types.ts";
import { createStoreOpener } from "../cli/database.ts";
import { createHiddenLine } from "../cli/hidden_line.ts";
import { createBufferedLog } from "./buffered_log.ts";
import { pooledRandom } from "./pooled_random.ts";
import { syncBlockCipher } from "./sync_block_cipher.ts";
import { createBcryptThreads, webThread } from "./bcrypt_threads.ts";
import { syncSha256Hex } from "./sync_digest.ts";
import { syncHmacSha256Base64Url } from "./sync_hmac.ts";

// The slice of the Deno namespace used here, typed locally so `tsc` (which has only Node's types) checks this file too.
interface DenoServer {
  addr: { hostname: string; port: number };
  shutdown(): Promise<void>;
  finished: Promise<void>;
}
interface DenoApi {
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { hostname: string; port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): DenoServer;
  addSignalListener(signal: "SIGTERM" | "SIGINT" | "SIGHUP" | "SIGQUIT", handler: () => void): void;
  removeSignalListener(signal: "SIGTERM" | "SIGINT" | "SIGHUP" | "SIGQUIT", handler: () => void): void;
  mkdir(path: string, options: { recursive: boolean; mode?: number }): Promise<void>;
  readTextFile(path: string | URL): Promise<string>;
  readTextFileSync(path: string | URL): string;
  stat(path: string): Promise<unknown>;
  writeTextFile(path: string, text: string, options: { mode: number }): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  open(
    path: string,
    options: { write: true; createNew: true; mode: number } | { append: true; create: true; mode: number },
  ): Promise<{ close(): void }>;
  open(path: string, options: { read: true }): Promise<{ readable: ReadableStream<Uint8Array> & AsyncIterable<Uint8Array> }>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  realPath(path: string): Promise<string>;
  cwd(): string;
  pid: number;
  errors: {
    NotFound: new (...args: never[]) => Error;
    AlreadyExists: new (...args: never[]) => Error;
    NotADirectory: new (...args: never[]) => Error;
  };
  env: { toObject(): Record<string, string> };
  args: string[];
  exitCode: number;
  exit(code: number): never;
  stdin: {
    readable: ReadableStream<Uint8Array>;
    isTerminal(): boolean;
    setRaw(mode: boolean): void;
    read(buffer: Uint8Array): Promise<number | null>;
  };
  stdout: { writeSync(bytes: Uint8Array): number };
  stderr: { writeSync(bytes: Uint8Array): number; isTerminal(): boolean };
}

/** The Deno namespace, reached through globalThis so this module also loads (and type-checks) outside Deno. */
export const Deno = (globalThis as unknown as { Deno: DenoApi }).Deno;

/** Binds Deno.serve to host:port (0 = any free port), then serves the app `build` makes for the bound port. */
export async function listenDeno(
  options: ListenOptions,
  build: (port: number) => Promise<App>,
): Promise<Listener> {
  // A request that arrives while the app is being built (seeding runs PBKDF2) waits for it.
  let app: App | undefined;
  let settle!: { resolve(app: App): void; reject(error: unknown): void };
  const ready = new Promise<App>((resolve, reject) => (settle = { resolve, reject }));
  ready.catch(() => {}); // a failed build is reported by listenDeno itself; a waiting request just fails
  let server!: DenoServer;
  const bound = new Promise<{ hostname: string; port: number }>((resolve, reject) => {
    // Deno.serve throws while binding ("Address already in use (os error 98)") without naming the address.
    try {
      server = serveOn(resolve);
    } catch (error) {
      reject(cannotListen(options, error));
    }
  });
  function serveOn(resolve: (addr: { hostname: string; port: number }) => void): DenoServer {
    return Deno.serve(
      // onListen runs inside Deno.serve, before `server` is assigned: use its argument, not server.addr.
      { port: options.port, hostname: options.host, onListen: resolve },
      (request, info) => {
        // app.fetch refuses a Host header that would rewrite the path (http/host.ts). A 413 sent before the body
        // is read needs no lingering close here: Deno.serve says Connection: close and discards the rest of the upload
        // before closing, with no bound a handler can set.
        const connection = { remoteAddress: info.remoteAddr.hostname };
        return app ? app.fetch(request, connection) : ready.then((built) => built.fetch(request, connection));
      },
    );
  }
  const { hostname, port } = await bound;
  try {
    app = await build(port);
  } catch (error) {
    settle.reject(error);
    await server.shutdown();
    throw error;
  }
  settle.resolve(app);
  const url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  // Deno.serve's accept loop ends for good when accept() fails (too many open files): `finished` rejects, and
  // the process would otherwise stay up serving nothing.
  const failed = new Promise<Error>((resolve) => {
    server.finished.catch((error: unknown) => resolve(error instanceof Error ? error : new Error(String(error))));
  });
  return { url, close: () => shutdownWithin(server, options.graceMs), failed };
}

/**
 * shutdown() stops accepting and waits for in-flight requests, with no limit of its own: a client that never
 * finishes sending its request would hold the process forever. Past the grace the caller goes on (closes the
 * database) and deno.ts exits, which ends the stuck connections.
 */
async function shutdownWithin(server: DenoServer, graceMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  try {
    await Promise.race([server.shutdown(), grace]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves at the first SIGTERM, SIGINT or SIGHUP (a closed terminal or SSH session). */
export function denoShutdownSignal(): Promise<string> {
  return new Promise((resolve) => {
    const handlers = SHUTDOWN_SIGNALS.map((signal) => [signal, () => done(signal)] as const);
    const done = (signal: string) => {
      for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
      resolve(signal);
    };
    for (const [name, handler] of handlers) Deno.addSignalListener(name, handler);
  });
}

function parentDir(path: string): string {
  const slash = path.lastIndexOf("/");
  // Deno.mkdir(…, { recursive: true }) fails on a trailing "/." ("new/./fg.db"), which Node's mkdir accepts.
  return slash <= 0 ? (slash === 0 ? "/" : ".") : path.slice(0, slash).replace(/(?<=.)(\/\.)+$/, "");
}

/** A missing database file created private, as on Node (serve_node.ts createDatabaseFile says why). */
async function createDatabaseFile(path: string): Promise<void> {
  await Deno.mkdir(parentDir(path), { recursive: true, mode: 0o700 });
  // Not createNew: through a symlink to a missing file it creates the target (see serve_node.ts).
  (await Deno.open(path, { append: true, create: true, mode: 0o600 })).close();
}

/** Creates `path` empty with mode 0600; false when something already exists there (never overwritten). */
async function createPrivateFile(path: string): Promise<boolean> {
  try {
    (await Deno.open(path, { write: true, createNew: true, mode: 0o600 })).close();
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw error;
  }
}

/** CliDeps.canonicalPath on Deno (the same answers as serve_node.ts's). */
async function canonicalPath(path: string): Promise<string> {
  const absolute = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  const real = (at: string) => Deno.realPath(at).catch((error: unknown) => {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) return undefined;
    throw error;
  });
  const found = await real(absolute);
  if (found !== undefined) return found;
  const name = absolute.slice(absolute.lastIndexOf("/") + 1);
  const dir = parentDir(absolute);
  return `${((await real(dir)) ?? dir).replace(/\/$/, "")}/${name}`;
}

/** package.json's version, read beside the sources (deno.json's `cli` and `start` tasks allow reading). */
function packageVersion(): string {
  return (JSON.parse(Deno.readTextFileSync(new URL("../../package.json", import.meta.url))) as { version: string }).version;
}

/** The CLI's runtime services on Deno. */
export function createDenoDeps(env: Record<string, string | undefined>, overrides: Partial<CliDeps> = {}): CliDeps {
  return {
    env,
    version: overrides.version ?? packageVersion(),
    clock: systemClock,
    random: pooledRandom(),
    log: overrides.log ?? denoStderrLog(),
    digest: syncSha256Hex,
    hmac: syncHmacSha256Base64Url,
    cores: navigator.hardwareConcurrency,
    blockCipher: syncBlockCipher,
    bcrypt: () => createBcryptThreads(webThread),
    openStore: createStoreOpener(createDatabaseFile),
    async readTextFile(path) {
      try {
        return await Deno.readTextFile(path);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return undefined;
        throw error;
      }
    },
    async readFileChunks(path) {
      try {
        // The readable closes the file when it ends or is cancelled.
        return (await Deno.open(path, { read: true })).readable;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return undefined;
        throw error;
      }
    },
    async fileExists(path) {
      try {
        // stat, not lstat: a --db symlink whose target is missing names no database (SQLite would create one).
        await Deno.stat(path);
        return true;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return false;
        throw error;
      }
    },
    async writePrivateFile(path, text) {
      const temporary = `${path}.${Deno.pid}.tmp`;
      try {
        await Deno.writeTextFile(temporary, text, { mode: 0o600 });
        await Deno.chmod(temporary, 0o600);
        await Deno.rename(temporary, path);
      } catch (error) {
        await removeIfPresent(temporary).catch(() => {});
        throw error;
      }
    },
    createPrivateFile,
    removeFile: removeIfPresent,
    canonicalPath,
    listen: listenDeno,
    shutdownSignal: denoShutdownSignal,
    ...overrides,
  };
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * The process-wide stderr log: JSON lines written once per turn; what is still buffered is written when the
 * process exits (deno.ts always ends with Deno.exit, which dispatches `unload`).
 */
function denoStderrLog(): Log {
  const buffered = createBufferedLog((text) => {
    try {
      writeAll(Deno.stderr, text);
    } catch {
      // stderr is gone (a closed pipe): there is nowhere left to report it, and the flush runs outside any
      // request, so throwing would only end the process.
    }
  });
  addEventListener("unload", buffered.flush);
  return buffered.log;
}

function writeAll(stream: { writeSync(bytes: Uint8Array): number }, text: string): void {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
}

/** Deno.stdout/stderr/stdin as the CLI's io. */
export function denoIo(): CliIo {
  return {
    stdout: (text) => writeAll(Deno.stdout, text),
    stderr: (text) => writeAll(Deno.stderr, text),
    readStdin: (options) =>
      options?.hidden !== undefined && Deno.stdin.isTerminal()
        ? readHiddenLine(options.hidden)
        : new Response(Deno.stdin.readable).text(),
    isTTY: Deno.stderr.isTerminal(),
  };
}

/** One line typed at the terminal with echo off (raw mode), after `prompt` on stderr; Ctrl-C cancels. */
async function readHiddenLine(prompt: string): Promise<string> {
  const line = createHiddenLine();
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(256);
  // Echo off before the prompt shows: keys typed the moment it appears must not reach the screen. A signal ends
  // the process without running `finally`, so each one first gives the terminal its echo back; 128 + the signal's
  // number is the shell's convention for the exit code. (Ctrl-C arrives as a key in raw mode; SIGINT here comes
  // from kill.)
  const restoreAndExit = (code: number) => () => {
    Deno.stdin.setRaw(false);
    Deno.exit(code);
  };
  const onSignal = {
    SIGHUP: restoreAndExit(129),
    SIGINT: restoreAndExit(130),
    SIGQUIT: restoreAndExit(131),
    SIGTERM: restoreAndExit(143),
  } as const;
  Deno.stdin.setRaw(true);
  for (const [signal, handler] of Object.entries(onSignal)) Deno.addSignalListener(signal as keyof typeof onSignal, handler);
  try {
    writeAll(Deno.stderr, prompt);
    for (;;) {
      const n = await Deno.stdin.read(buffer);
      const status = n === null ? "done" : line.feed(decoder.decode(buffer.subarray(0, n), { stream: true }));
      if (status === "cancelled") throw new UsageError("password entry cancelled");
      if (status === "done") return line.value;
    }
  } finally {
    for (const [signal, handler] of Object.entries(onSignal)) Deno.removeSignalListener(signal as keyof typeof onSignal, handler);
    Deno.stdin.setRaw(false);
    writeAll(Deno.stderr, "\n");
  }
}
