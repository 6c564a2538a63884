// Node runtime services for the CLI and server: node:http listener, signals, files, stdio.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, Server as NetServer } from "node:net";
import { availableParallelism } from "node:os";
import { readFileSync } from "node:fs";
import { chmod, mkdir, open, readFile, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import type { App } from "../app.ts";
import { systemClock } from "../deps.ts";
import { cannotListen, SHUTDOWN_SIGNALS, UsageError, type CliDeps, type CliIo, type Listener, type ListenOptions } from "../cli/types.ts";
import { createStoreOpener } from "../cli/database.ts";
import { createHiddenLine, type HiddenLineStatus } from "../cli/hidden_line.ts";
import { declaresMoreThan, maxBodyBytesOf, toNodeListener } from "./node_listener.ts";
import { syncBlockCipher } from "./sync_block_cipher.ts";
import { createBcryptThreads, nodeThread } from "./bcrypt_threads.ts";
import { lightTextResponse } from "./light_response.ts";
import { syncSha256Hex } from "./sync_digest.ts";
import { syncHmacSha256Base64Url } from "./sync_hmac.ts";
import { nodeStderrLog } from "./node_log.ts";
import { nodeWorkerPool, primaryShutdownRequest } from "./node_cluster.ts";
import { pooledRandom } from "./pooled_random.ts";

/**
 * Explicit limits instead of node:http's defaults (60 s for headers, 300 s for a whole request): a client that
 * sends its headers or its at most 64 KiB body slower than this is cut off (408) rather than holding a socket.
 * The check runs every CHECK_INTERVAL_MS, so a limit is reached up to that much later.
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const CHECK_INTERVAL_MS = 2_000;
/**
 * Neither limit above covers the response: a client that asks for a large page and never reads it held the
 * buffered answer (megabytes per connection) for as long as it kept the socket open. A socket on which nothing
 * moves for this long is destroyed; a slow reader that keeps reading is not cut.
 */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * How long after a shutdown signal an idle keep-alive connection is left open before it is closed. A client may be
 * sending its next request on it at this moment; closing it at once would reset that request (a proxy does not
 * retry a reset POST). Within this time, a request that arrives is served with `Connection: close`.
 */
const IDLE_LINGER_MS = 1_000;

/**
 * A server's shutdown state. Serving touches it once per response (the listener reads `closing`); nothing tracks
 * requests or sockets while serving, since listeners on each response cost more CPU per request than the app's work.
 */
interface Shutdown {
  closing: boolean;
}

/**
 * Ends `server` without resetting a request. From the signal on, every response not yet written says
 * `Connection: close` (the listener reads `shutdown.closing`), so a connection that carries a request closes after
 * answering it; the client opens a new one (to another instance). A connection left idle is closed only once it has
 * been quiet for IDLE_LINGER_MS since the signal: closing it at once would reset a request its client is sending right
 * now. Connections that carried a request after the signal have closed themselves by then, so what is idle at that
 * point has been quiet since the signal.
 */
function closeGracefully(server: Server, shutdown: Shutdown, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    shutdown.closing = true;
    let timer: ReturnType<typeof setInterval> | undefined;
    const linger = setTimeout(() => {
      server.closeIdleConnections();
      timer = setInterval(() => server.closeIdleConnections(), 100);
    }, IDLE_LINGER_MS);
    // net.Server's close: stop accepting, resolve once every connection has ended. http.Server's own close would
    // also close every idle keep-alive connection at once, resetting a request its client is sending right now.
    NetServer.prototype.close.call(server, () => {
      clearTimeout(linger);
      clearInterval(timer);
      resolve();
    });
    // A stuck client cannot hold shutdown up past the grace.
    setTimeout(() => server.closeAllConnections(), graceMs).unref();
  });
}

/** Binds node:http to host:port (0 = any free port), then serves the app `build` makes for the bound port. */
export async function listenNode(
  options: ListenOptions,
  build: (port: number) => Promise<App>,
): Promise<Listener> {
  const server = createServer({
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CHECK_INTERVAL_MS,
  });
  // With no "timeout" listener, node:http destroys the socket when it fires.
  server.setTimeout(options.idleMs ?? IDLE_TIMEOUT_MS);
  const shutdown: Shutdown = { closing: false };
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(cannotListen(options, error));
    server.once("error", failed);
    server.listen(options.port, options.host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // A request that arrives while the app is being built (seeding runs PBKDF2) waits for it instead of hanging
  // with no listener; once built, requests go straight to the app's listener.
  const ready = build(address.port).then((app) => ({ listener: toNodeListener(app, url, { closing: () => shutdown.closing }), maxBodyBytes: maxBodyBytesOf(app) }));
  const early = (req: IncomingMessage, res: ServerResponse) =>
    void ready.then(({ listener }) => listener(req, res), () => res.destroy());
  server.on("request", early);
  let listener: Awaited<typeof ready>["listener"];
  let maxBodyBytes: number;
  try {
    ({ listener, maxBodyBytes } = await ready);
  } catch (error) {
    await closeGracefully(server, shutdown, options.graceMs);
    throw error;
  }
  server.off("request", early);
  server.on("request", listener);
  // Expect: 100-continue (RFC 9110 §10.1.1): invite the body only when it may be accepted. node:http would send
  // 100 Continue for a declared 10 MB upload too, and the client would start sending what is refused anyway.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!declaresMoreThan(req, maxBodyBytes)) res.writeContinue();
    void listener(req, res);
  });
  return { url, close: () => closeGracefully(server, shutdown, options.graceMs) };
}

/**
 * Resolves at the first SIGTERM, SIGINT or SIGHUP, or in a `--workers` worker when the primary forwards one; a
 * second signal gets Node's default behaviour (exit at once).
 */
export function nodeShutdownSignal(): Promise<string> {
  return Promise.race([primaryShutdownRequest(), new Promise<string>((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      for (const name of SHUTDOWN_SIGNALS) process.off(name, on);
      resolve(signal);
    };
    for (const name of SHUTDOWN_SIGNALS) process.on(name, on);
  })]);
}

async function readText(path: string | URL): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Creates a missing database file readable by its owner only, in a directory (made if missing) only its owner may
 * enter: the file holds password hashes, e-mail addresses and the farms' boundaries, and SQLite gives the -wal and
 * -shm files the main file's mode, so the usual umask would leave all three world-readable. An existing file keeps
 * its mode: the operator chose it.
 */
async function createDatabaseFile(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // O_CREAT without O_EXCL: a --db that is a symlink to a missing file creates its target, 0600 too, where "wx"
  // failed with EEXIST on the link and left SQLite to create the target under the umask. The mode applies only
  // when the file is created, and append mode never truncates one that exists.
  await (await open(path, "a", 0o600)).close();
}

/** Creates `path` empty with mode 0600; false when something already exists there (never overwritten). */
async function createPrivateFile(path: string): Promise<boolean> {
  try {
    await (await open(path, "wx", 0o600)).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** CliDeps.canonicalPath on Node. */
async function canonicalPath(path: string): Promise<string> {
  // Made absolute without resolve(): it folds "link/.." by text, where the kernel (and realpath) go through the
  // link, so "link/../fg.db-journal" would name another file than the one it opens.
  const absolute = isAbsolute(path) ? path : `${process.cwd()}/${path}`;
  const real = (at: string) => realpath(at).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
    throw error;
  });
  return (await real(absolute)) ?? join((await real(dirname(absolute))) ?? dirname(absolute), basename(absolute));
}

/** package.json's version: two levels up from this module both in src/ (a checkout) and in dist/ (the package). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

/** The CLI's runtime services on Node; `overrides` lets tests swap e.g. the shutdown signal or the log. */
export function createNodeDeps(env: Record<string, string | undefined>, overrides: Partial<CliDeps> = {}): CliDeps {
  return {
    env,
    version: overrides.version ?? packageVersion(),
    clock: systemClock,
    random: pooledRandom(),
    log: overrides.log ?? nodeStderrLog(),
    digest: syncSha256Hex,
    hmac: syncHmacSha256Base64Url,
    cores: availableParallelism(),
    blockCipher: syncBlockCipher,
    bcrypt: () => createBcryptThreads(nodeThread),
    // The listener (node_listener.ts) writes these itself; Deno.serve reads standard Responses, so Deno passes none.
    textResponse: lightTextResponse,
    openStore: createStoreOpener(createDatabaseFile),
    readTextFile: readText,
    async readFileChunks(path) {
      try {
        // Opened first, so a missing file is known before anything is read; the stream closes the handle.
        return (await open(path, "r")).createReadStream();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    },
    async fileExists(path) {
      try {
        await stat(path); // follows a symlink: one to a missing file names no database
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
        throw error;
      }
    },
    async writePrivateFile(path, text) {
      const temporary = `${path}.${process.pid}.tmp`;
      try {
        await writeFile(temporary, text, { mode: 0o600, flush: true });
        // mode only applies when the file is created; a leftover temporary file keeps its old mode otherwise.
        await chmod(temporary, 0o600);
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true }).catch(() => {});
        throw error;
      }
    },
    createPrivateFile,
    async removeFile(path) {
      await rm(path, { force: true });
    },
    canonicalPath,
    listen: listenNode,
    shutdownSignal: nodeShutdownSignal,
    workers: nodeWorkerPool(),
    ...overrides,
  };
}

/** process.stdout/stderr/stdin as the CLI's io. */
export function nodeIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    async readStdin(options) {
      if (options?.hidden !== undefined && process.stdin.isTTY) return readHiddenLine(options.hidden);
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    isTTY: Boolean(process.stderr.isTTY),
  };
}

/** One line typed at the terminal with echo off (raw mode), after `prompt` on stderr; Ctrl-C cancels. */
function readHiddenLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  const line = createHiddenLine();
  const decoder = new TextDecoder();
  // Echo off before the prompt shows: keys typed the moment it appears must not reach the screen. Node gives the
  // terminal back itself when SIGINT or SIGTERM ends the process, not for SIGHUP or SIGQUIT: those are caught here,
  // the terminal restored, and the process ends as the signal would have (128 + its number).
  const restoreAndExit = (code: number) => () => {
    stdin.setRawMode(false);
    process.exit(code);
  };
  const onSignal = { SIGHUP: restoreAndExit(129), SIGQUIT: restoreAndExit(131) } as const;
  stdin.setRawMode(true);
  for (const [signal, handler] of Object.entries(onSignal)) process.once(signal, handler);
  process.stderr.write(prompt);
  stdin.resume();
  return new Promise((resolve, reject) => {
    const finish = (status: HiddenLineStatus) => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      for (const [signal, handler] of Object.entries(onSignal)) process.off(signal, handler);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (status === "cancelled") reject(new UsageError("password entry cancelled"));
      else resolve(line.value);
    };
    const onData = (chunk: Buffer) => {
      const status = line.feed(decoder.decode(chunk, { stream: true }));
      if (status !== "more") finish(status);
    };
    const onEnd = () => finish("done");
    stdin.on("data", onData);
    stdin.once("end", onEnd);
  });
}
