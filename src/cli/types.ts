// Contracts between the CLI core and the runtime adapters: the io streams, the runtime services, the command shape.
import type { App } from "../app.ts";
import type { Config } from "../config.ts";
import type { BcryptService, BlockCipherFactory, Clock, Digest, Hmac, Log, Random, TextResponse } from "../deps.ts";
import type { OpenOptions } from "../store/sqlite/database.ts";
import type { Store } from "../store/contract.ts";
import type { PostgresStoreOptions } from "../store/postgres/store.ts";
import { messageOf } from "./text.ts";

/** The terminal: adapters bind it to process.std* (Node) or Deno.std* (Deno); tests pass a recorder. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * Everything on stdin as text (only read when a command asks for it, e.g. --password-stdin). When stdin is a
   * terminal and `hidden` is given, that prompt goes to stderr and one line is read without echo instead.
   * @throws UsageError when the user cancels the hidden line with Ctrl-C
   */
  readStdin(options?: { hidden?: string }): Promise<string>;
  /** True when stderr is a terminal: progress output is only worth drawing there. */
  isTTY: boolean;
}

/** Where and how to listen: host and port (0 = any free one), and how long close() waits for requests. */
export interface ListenOptions {
  port: number;
  host: string;
  graceMs: number;
  /**
   * Node: a connection on which nothing moves either way for this long is cut (default 30 s), such as a client
   * that never reads the response it asked for. Deno.serve has no such setting.
   */
  idleMs?: number;
}

/** Signals that stop `serve` gracefully; SIGHUP too, which a closed terminal or SSH session sends. */
export const SHUTDOWN_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/** A failure to bind, naming the settings that chose the address (the runtimes' own messages may not). */
export function cannotListen(options: ListenOptions, error: unknown): Error {
  return new Error(`cannot listen on HOST ${options.host}, PORT ${options.port}: ${messageOf(error)}`, { cause: error });
}

/** A running HTTP listener. */
export interface Listener {
  /** The URL it actually listens on (port 0 resolved). */
  url: string;
  /** Stops accepting, lets in-flight requests finish (within a grace period), then resolves. */
  close(): Promise<void>;
  /**
   * Resolves with the cause if the listener stops serving on its own (Deno.serve's accept loop ends when the
   * process runs out of file descriptors); `serve` then exits non-zero so a supervisor restarts it.
   */
  failed?: Promise<Error>;
}

/** Several `serve` processes sharing one port (Node: node:cluster); see CliDeps.workers. */
export interface WorkerPool {
  /** This process's 1-based worker number when it was forked by run(); undefined otherwise. */
  index: number | undefined;
  /**
   * Forks `count` workers running the same command line, forwards SIGTERM/SIGINT, resolves with the exit code.
   * `onListening` is called once, with the port, when the first worker is listening.
   */
  run(count: number, options?: { onListening?(port: number): void }): Promise<number>;
}

/** Runtime services the CLI needs; each adapter implements them once. */
export interface CliDeps {
  env: Record<string, string | undefined>;
  /** The fieldgate release (package.json's version): `--version`, the `listening` line, `fieldgate_build_info`. */
  version: string;
  clock: Clock;
  random: Random;
  log: Log;
  /** A faster SHA-256 than the portable crypto.subtle default (both adapters pass node:crypto's one-shot hash). */
  digest?: Digest;
  /** An HMAC off the thread pool PBKDF2 runs on (both adapters pass node:crypto's synchronous one). */
  hmac?: Hmac;
  /** CPU cores of the machine, which size the default password concurrency; unknown in an embedder's test double. */
  cores?: number;
  /** A faster AES block cipher than the portable crypto.subtle default (both adapters pass node:crypto's ECB). */
  blockCipher?: BlockCipherFactory;
  /** Starts bcrypt checks off the event loop for one server (both adapters: worker threads); its caller closes it. */
  bcrypt?: () => BcryptService;
  /** The Responses of the app's JSON answers, for a server adapter that writes their text itself (Node's listener). */
  textResponse?: TextResponse;
  /**
   * Opens (and migrates) the store at `location`: a postgres:// URL opens a pool to that database and migrates it
   * under the advisory lock; anything else is a SQLite file, created (with its directory) if missing.
   */
  openStore(location: string, options?: StoreOpenOptions): Promise<Store>;
  /** Text of a file, or undefined when it does not exist. */
  readTextFile(path: string | URL): Promise<string | undefined>;
  /**
   * The bytes of a file in chunks, read as they are consumed (the file is closed at the end, or when the consumer
   * stops early), or undefined when it does not exist: for files too large to hold, like a Doorkeeper token export.
   */
  readFileChunks(path: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** False when nothing exists at `path`. */
  fileExists(path: string): Promise<boolean>;
  /**
   * Writes a file readable by its owner only (mode 0600): for credentials. Written under a temporary name and
   * renamed into place, so a failed write (a full disk) leaves the old file or none, never an empty one.
   */
  writePrivateFile(path: string, text: string): Promise<void>;
  /** Creates an empty file readable by its owner only (mode 0600); false when something already exists at `path`. */
  createPrivateFile(path: string): Promise<boolean>;
  /** Removes a file; nothing when it does not exist. */
  removeFile(path: string): Promise<void>;
  /**
   * The absolute path with symbolic links, "." and ".." resolved: of the file when it exists, else of its directory
   * joined with its name (unchanged, only made absolute, when the directory is missing too). Two spellings of one
   * file compare equal.
   */
  canonicalPath(path: string): Promise<string>;
  /**
   * Binds host:port, then serves the app `build` makes for the port actually bound (port 0 resolved), until
   * close(). The socket comes first because the default base URL (issuer, metadata, demo redirect URI) names that
   * port; requests arriving while `build` runs wait for it. If `build` throws, the socket is closed and listen
   * rejects with that error.
   */
  listen(options: ListenOptions, build: (port: number) => Promise<App>): Promise<Listener>;
  /** Resolves with the signal name at the first SIGTERM, SIGINT or SIGHUP. */
  shutdownSignal(): Promise<string>;
  /** Multi-process serving for `serve --workers`; absent where the runtime has none (Deno). */
  workers?: WorkerPool;
}

/** What a command returns: one JSON object for --json, and the human-readable text otherwise. */
export interface CommandResult {
  json: Record<string, unknown>;
  text: string;
}

export interface FlagSpec {
  type: "string" | "boolean";
  description: string;
  /** A string flag that may be given more than once; its values arrive as an array, in order. */
  repeatable?: true;
  /** Shown in usage as --flag VALUE. */
  value?: string;
}

/** How to open a store: SQLite's options for a file, the pool's for PostgreSQL; each backend ignores the other's. */
export type StoreOpenOptions = OpenOptions & PostgresStoreOptions;

/** Arguments after parsing: flags by name (without dashes) and positionals in order. */
export interface ParsedArgs {
  flags: Record<string, string | readonly string[] | boolean | undefined>;
  positionals: string[];
}

export interface CommandContext {
  args: ParsedArgs;
  config: Readonly<Config>;
  io: CliIo;
  deps: CliDeps;
  /** The environment with command-line overrides applied (what `config` was loaded from). */
  env: Record<string, string | undefined>;
  /** Opened by main after validation, so a bad argument never creates or touches a database; closed by main. */
  store: Store;
  /** stdin's text when readsStdin said so. */
  stdin: string | undefined;
  /** Epoch seconds when the command started. */
  now: number;
}

/** What every command declares: its words, help and argument checks. */
interface CommandBase {
  /** "clients add", "purge", … */
  name: string;
  summary: string;
  /** Positional arguments in usage order, e.g. ["CLIENT_ID"]. */
  positionals: string[];
  flags: Record<string, FlagSpec>;
  /** True when the command needs stdin (read by main before validation, so it can be checked too). */
  readsStdin?(args: ParsedArgs): boolean;
  /** The prompt for stdin when it is a terminal: the text is then read as a secret, without echo. */
  stdinPrompt?: string;
  /**
   * Checks arguments (and stdin, and what the runtime offers) without a database; throws UsageError. Runs before
   * the store is opened, so a refused command has not created or migrated anything.
   */
  validate?(args: ParsedArgs, stdin: string | undefined, deps: CliDeps): void;
}

/** A command that works through the Store, which main opens for it after validation and closes after it. */
export interface StoreCommand extends CommandBase {
  opensDatabase?: undefined;
  /** Options for opening the store (serve turns automatic checkpoints off). */
  storeOptions?: OpenOptions;
  /**
   * True for the commands that may start a new database (serve, users add, clients add for authorization_code; a
   * function decides from the arguments). Every other command acts on what a database already holds, so a path where
   * none exists is a mistyped --db or FIELDGATE_DB, and a PostgreSQL database without fieldgate's tables is the wrong
   * one: both are refused rather than answered from a new, empty database ("No users.").
   */
  createsDatabase?: true | ((args: ParsedArgs) => boolean);
  /** True for serve: the migrations an open applies are logged (`migrated`), since nobody reads its output. */
  logsMigrations?: true;
  run(ctx: CommandContext): Promise<CommandResult | number>;
}

/**
 * A command that opens its databases itself, below the Store: migrate (which reports the steps it applied) and
 * copy-store (which reads one database and writes another). main opens nothing for it.
 */
export interface DatabaseCommand extends CommandBase {
  opensDatabase: true;
  run(ctx: Omit<CommandContext, "store">): Promise<CommandResult | number>;
}

export type Command = StoreCommand | DatabaseCommand;

/** A bad argument: main prints the message and exits 2 without writing anything. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A well-formed request that cannot be carried out (a taken username): exit 1, nothing written. */
export class CommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CommandError";
  }
}
