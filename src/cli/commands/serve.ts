// `serve`: seeds a fresh database with demo data (unless FIELDGATE_DEMO=false), serves the app until SIGTERM/SIGINT/SIGHUP, then
// shuts down cleanly.
import { createApp, type App } from "../../app.ts";
import { loadConfig, type Config } from "../../config.ts";
import type { BcryptService, DemoCredentials } from "../../deps.ts";
import { formatDemoBanner, formatDemoReminder } from "../../demo/banner.ts";
import { DEMO_FIELDS_URL, type DemoSeed, demoCredentialsPath, readDemoCredentials, seedDemo } from "../../demo/seed.ts";
import { demoRedirectUri, syncDemoRedirectUri } from "../../demo/redirect_uri.ts";
import { startMaintenance } from "../../server/maintenance.ts";
import { LOOPBACK_HOSTS } from "../../oauth/redirect_uri.ts";
import { RegistrationError } from "../../oauth/registration.ts";
import { StoreConflictError } from "../../store/errors.ts";
import { connectionRoom, connectionWarning, describeDatabase } from "../database.ts";
import { messageOf } from "../text.ts";
import {
  CommandError,
  UsageError,
  type CliDeps,
  type CliIo,
  type Command,
  type CommandContext,
  type ParsedArgs,
} from "../types.ts";

const MAX_WORKERS = 64;

/** An http base URL naming anything but this machine's loopback interface. */
function plainHttpBeyondLoopback(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname);
}

/** A listen address only this machine can reach: 127.0.0.0/8, ::1 or localhost (not 0.0.0.0 or ::, every interface). */
function loopbackBindAddress(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Why a server is reachable from beyond this machine, if it is: a base URL naming another host, or a listener on
 * more than loopback. The listener counts as much as the URL: HOST=0.0.0.0 (a container) with the default
 * localhost base URL is reachable from the network all the same.
 */
function reachableBeyondThisMachine(config: Readonly<Config>): { what: string; reason: string } | undefined {
  if (!LOOPBACK_HOSTS.has(new URL(config.baseUrl).hostname)) {
    return { what: `${config.baseUrl} is not this machine`, reason: "base_url_not_loopback" };
  }
  if (!loopbackBindAddress(config.host)) {
    return { what: `the server listens on ${config.host}, beyond this machine`, reason: "host_not_loopback" };
  }
  return undefined;
}

/** --workers as a count; 1 when absent. More than 1 only where the runtime can fork workers (Node). */
function workerCount(args: ParsedArgs, deps: CliDeps): number {
  const value = args.flags.workers;
  if (value === undefined) return 1;
  const n = typeof value === "string" && /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_WORKERS)) throw new UsageError(`--workers must be a whole number from 1 to ${MAX_WORKERS}`);
  if (n > 1 && !deps.workers) throw new UsageError("--workers is not supported on this runtime; run one process per port");
  return n;
}

/**
 * Seeds an empty database with the demo and writes its credentials file; undefined when it already had data or
 * when FIELDGATE_DEMO is set to false: an operator who switched the demo off gets no demo account, no demo
 * clients and no printed secrets, and sets the service up with the CLI instead.
 */
async function seedIfEmpty(ctx: CommandContext, config: Readonly<Config>): Promise<DemoSeed | undefined> {
  const { store, deps, now } = ctx;
  if (config.demoSetting === "off") return undefined;
  if ((await store.organizations.list()).length > 0) return undefined;
  // Unset, the demo is for someone trying fieldgate on their own machine. A server with a public base URL would
  // otherwise start life with a demo person account and print its password and client secrets to stdout, which
  // systemd and docker keep with the logs.
  const beyond = config.demoSetting === "auto" ? reachableBeyondThisMachine(config) : undefined;
  if (beyond) {
    ctx.io.stdout(`Empty database, no demo data: ${beyond.what}. Create users and clients with ` +
      "the CLI (users add, clients add), or set FIELDGATE_DEMO=true to seed the demo anyway.\n");
    deps.log("demo_not_seeded", { reason: beyond.reason });
    return undefined;
  }
  const text = await deps.readTextFile(DEMO_FIELDS_URL);
  if (text === undefined) throw new CommandError(`demo data missing: ${DEMO_FIELDS_URL.href}`);
  let seed: DemoSeed;
  try {
    seed = await seedDemo(store, {
      geojson: JSON.parse(text),
      baseUrl: config.baseUrl,
      pbkdf2Iterations: config.pbkdf2Iterations,
      random: deps.random,
      now,
    });
  } catch (error) {
    // Instances sharing one PostgreSQL database may start together on an empty one: the first to insert the demo
    // user seeds, and the others, finding the name taken, go on with its data instead of failing to start.
    if (isTakenName(error) && (await store.organizations.list()).length > 0) {
      deps.log("demo_seeded_elsewhere", {});
      return undefined;
    }
    throw error;
  }
  await writeCredentials(seed, config, deps);
  deps.log("demo_seeded", { organization: seed.organization, fields: seed.fields });
  return seed;
}

/** A username (or other unique name) another writer took first. */
function isTakenName(error: unknown): boolean {
  return error instanceof StoreConflictError || (error instanceof RegistrationError && error.reason === "taken");
}

/**
 * The demo credentials file, beside a SQLite database. A PostgreSQL database has no directory of its own to keep it
 * in, and the instances sharing it may run on different machines: the credentials are shown once and kept nowhere.
 */
function credentialsPathOf(config: Readonly<Config>): string | undefined {
  return config.databaseUrl === undefined ? demoCredentialsPath(config.dbPath) : undefined;
}

async function writeCredentials(seed: DemoSeed, config: Readonly<Config>, deps: CliDeps): Promise<void> {
  const credentialsPath = credentialsPathOf(config);
  if (credentialsPath) await deps.writePrivateFile(credentialsPath, JSON.stringify(seed, null, 2) + "\n");
}

/**
 * Shows the demo credentials once, for the base URL the server answers on. When the seed was made for another one
 * (the primary of `serve --workers` seeds before any worker has bound port 0), the redirect URI it shows and the
 * credentials file are brought to the bound one first, as each worker did with the registration itself.
 */
async function announceSeed(seed: DemoSeed, config: Readonly<Config>, io: CliIo, deps: CliDeps): Promise<void> {
  const redirectUri = demoRedirectUri(config.baseUrl);
  const shown = seed.authorizationCodeClient.redirect_uri === redirectUri
    ? seed
    : { ...seed, authorizationCodeClient: { ...seed.authorizationCodeClient, redirect_uri: redirectUri } };
  if (shown !== seed) await writeCredentials(shown, config, deps);
  // stdout, not the log: the log stream is shipped and kept, the terminal is the operator's.
  io.stdout(formatDemoBanner(shown, { baseUrl: config.baseUrl, credentialsPath: credentialsPathOf(config) }));
}

/** Demo mode defaults on when a demo credentials file sits beside the database, unless FIELDGATE_DEMO says otherwise. */
async function demoSettings(
  config: Readonly<Config>,
  deps: CliDeps,
): Promise<{ config: Readonly<Config>; demo: DemoCredentials | undefined }> {
  const path = credentialsPathOf(config);
  const text = path === undefined ? undefined : await deps.readTextFile(path);
  const demo = text === undefined ? undefined : readDemoCredentials(text);
  if (demo && config.demoSetting === "auto") return { config: Object.freeze({ ...config, demo: true }), demo };
  return { config, demo };
}

/**
 * The environment of a process serving on `port`. With PORT=0 (any free port) the default base URL, which is the
 * issuer, the metadata's endpoints, the `iss` of every authorization response and the demo's redirect URI, must
 * name the port the kernel picked, not 0.
 */
function envForPort(env: CommandContext["env"], port: number): CommandContext["env"] {
  return { ...env, PORT: String(port) };
}

/** The line a start that finds demo data prints: where the walkthrough and the credentials file are. */
function remindOfDemo(config: Readonly<Config>, io: CliIo): void {
  io.stdout(formatDemoReminder({ baseUrl: config.baseUrl, credentialsPath: credentialsPathOf(config) }));
}

/**
 * Seeds (unless a forked worker), settles the demo client and builds the app, once the bound port is known. A single
 * process that finds demo data says where the walkthrough is (`remind`); with --workers the primary does.
 */
async function buildApp(
  ctx: CommandContext,
  port: number,
  options: { seed: boolean; remind: boolean; bcrypt: BcryptService | undefined },
): Promise<App> {
  const { io, deps, store } = ctx;
  const env = envForPort(ctx.env, port);
  const bound = loadConfig(env);
  const seed = options.seed ? await seedIfEmpty(ctx, bound) : undefined;
  if (seed) await announceSeed(seed, bound, io, deps);
  const { config, demo } = await demoSettings(bound, deps);
  if (!seed && options.remind && config.demo && demo) remindOfDemo(config, io);
  // The seed registered the demo client's redirect URI under the first start's base URL; it follows this one's.
  if (config.demo && demo) await syncDemoRedirectUri(store, { demo, baseUrl: config.baseUrl, log: deps.log });
  const workers = workerCount(ctx.args, deps);
  // With --workers each process has its own password limit, so each sizes it from its share of the cores.
  const cores = deps.cores === undefined ? undefined : Math.max(1, Math.floor(deps.cores / workers));
  const { clock, random, log, digest, hmac, blockCipher, textResponse } = deps;
  const { bcrypt } = options;
  const { version } = deps;
  return createApp({ config, store, clock, random, log, digest, hmac, blockCipher, textResponse, bcrypt, cores, demo, version });
}

export const serve: Command = {
  name: "serve",
  summary: "run the HTTP server until SIGTERM, SIGINT or SIGHUP",
  positionals: [],
  flags: {
    port: { type: "string", value: "N", description: "port to listen on (env PORT, default 8080; 0 picks a free one)" },
    host: { type: "string", value: "H", description: "address to bind (env HOST, default 127.0.0.1)" },
    "base-url": { type: "string", value: "URL", description: "public base URL (env FIELDGATE_BASE_URL)" },
    workers: {
      type: "string",
      value: "N",
      description: "processes sharing the port and the database (default 1; Node only, one per core at most)",
    },
  },
  validate: (args, _stdin, deps) => void workerCount(args, deps),
  // Checkpoints run on a timer (maintenance.ts) instead of inside request commits.
  storeOptions: { autoCheckpointPages: 0 },
  createsDatabase: true,
  logsMigrations: true,
  async run(ctx) {
    const { args, config: initial, io, deps, store } = ctx;
    const workers = workerCount(args, deps);
    const worker = deps.workers?.index;
    if (workers > 1 && deps.workers && worker === undefined) {
      // The primary seeds once, before forking, so workers never race to. It binds no socket itself: the banner
      // waits for the first worker to listen, so with port 0 it names the port the workers actually share.
      const seed = await seedIfEmpty(ctx, initial);
      deps.log("starting_workers", { workers });
      return deps.workers.run(workers, {
        onListening: (port) => {
          // The workers are serving by now; a failure here must not take the primary (and so them) down.
          const bound = loadConfig(envForPort(ctx.env, port));
          const shown = seed
            ? announceSeed(seed, bound, io, deps)
            : demoSettings(bound, deps).then(({ config, demo }) => void (config.demo && demo && remindOfDemo(config, io)));
          shown.catch((error: unknown) =>
            deps.log("demo_announce_failed", { error: messageOf(error) })
          );
        },
      });
    }
    // Listened for before seeding and binding: a signal during startup (the seed's PBKDF2 takes a while) is
    // answered by a normal shutdown as soon as the server is up, with its log lines, not by an unlogged exit.
    const stopRequested = deps.shutdownSignal();
    let app!: App;
    // Made here, not in buildApp, so that this function, which outlives the app, ends its threads.
    const bcrypt = deps.bcrypt?.();
    const listen = { port: initial.port, host: initial.host, graceMs: initial.shutdownGraceSeconds * 1000 };
    const listener = await deps.listen(listen, async (port) => {
      // A forked worker finds the database seeded by the primary.
      app = await buildApp(ctx, port, { seed: worker === undefined, remind: worker === undefined, bcrypt });
      return app;
    }).catch(async (error: unknown) => {
      await bcrypt?.close();
      throw error;
    });
    const { config } = app.deps;
    // The database as describeDatabase shows it: a PostgreSQL URL without its password, since logs are shipped and kept.
    deps.log("listening", {
      url: listener.url,
      version: deps.version,
      base_url: config.baseUrl,
      demo: config.demo,
      database: await describeDatabase(config),
    });
    if (config.databaseUrl !== undefined && worker === undefined) await warnOfTightConnections(config, deps.log);
    if (plainHttpBeyondLoopback(config.baseUrl)) {
      // Passwords, codes, secrets and bearer tokens would cross the network in clear (RFC 6749 §3.1, §10.9;
      // RFC 6750 §5.3), and cookies lose Secure and __Host-. Warned, not refused: a proxy on the same host may
      // still be the one terminating TLS for a base URL that simply says http by mistake.
      deps.log("insecure_base_url", {
        base_url: config.baseUrl,
        advice: "serve fieldgate behind TLS and set FIELDGATE_BASE_URL to its https URL",
      });
    }
    // Checkpoints and purges need one process only: worker 1 (or the single process) runs them.
    const maintenance = worker === undefined || worker === 1
      ? startMaintenance({ store, config, clock: deps.clock, log: deps.log })
      : { stop() {} };
    const ended = await Promise.race([
      stopRequested.then((signal) => ({ signal })),
      ...(listener.failed ? [listener.failed.then((error) => ({ error }))] : []),
    ]);
    if ("error" in ended) {
      // Nothing is accepted any more: say why, in the log's format, and end so a supervisor can restart us.
      deps.log("server_failed", { error: ended.error.message });
      maintenance.stop();
      await listener.close().catch(() => {});
      await bcrypt?.close();
      return 1;
    }
    deps.log("shutting_down", { signal: ended.signal });
    maintenance.stop();
    await listener.close();
    await bcrypt?.close();
    deps.log("stopped", {});
    return 0;
  },
};

/**
 * Warns when the role's PostgreSQL connections leave no room for a second instance's pool and the operator's tools
 * (`database_connections_tight`): a full server refuses every new connection, the operator's pg_dump among them.
 * A server that will not say (a pooler in front) is not warned of.
 */
async function warnOfTightConnections(config: Readonly<Config>, log: CliDeps["log"]): Promise<void> {
  const room = await connectionRoom(config.databaseUrl!, config).catch(() => undefined);
  const warning = room && connectionWarning(room);
  if (warning) log("database_connections_tight", warning);
}
