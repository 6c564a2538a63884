// `serve`: seeds a fresh database with demo data, serves the app until SIGTERM/SIGINT, then shuts down cleanly.
import { createApp } from "../../app.ts";
import { loadConfig, type Config } from "../../config.ts";
import type { DemoCredentials } from "../../deps.ts";
import { formatDemoBanner } from "../../demo/banner.ts";
import { DEMO_FIELDS_URL, demoCredentialsPath, readDemoCredentials, seedDemo } from "../../demo/seed.ts";
import { startMaintenance } from "../../server/maintenance.ts";
import type { Store } from "../../store/store.ts";
import { CommandError, type CliDeps, type CliIo, type Command } from "../types.ts";

async function seedIfEmpty(store: Store, config: Readonly<Config>, io: CliIo, deps: CliDeps, now: number): Promise<void> {
  if ((await store.organizations.list()).length > 0) return;
  const text = await deps.readTextFile(DEMO_FIELDS_URL);
  if (text === undefined) throw new CommandError(`demo data missing: ${DEMO_FIELDS_URL.href}`);
  const seed = await seedDemo(store, {
    geojson: JSON.parse(text),
    baseUrl: config.baseUrl,
    pbkdf2Iterations: config.pbkdf2Iterations,
    random: deps.random,
    now,
  });
  const credentialsPath = demoCredentialsPath(config.dbPath);
  if (credentialsPath) await deps.writePrivateFile(credentialsPath, JSON.stringify(seed, null, 2) + "\n");
  // stdout, not the log: the log stream is shipped and kept, the terminal is the operator's.
  io.stdout(formatDemoBanner(seed, { baseUrl: config.baseUrl, credentialsPath }));
  deps.log("demo_seeded", { organization: seed.organization, fields: seed.fields });
}

/** Demo mode defaults on when a demo credentials file sits beside the database, unless FIELDGATE_DEMO says otherwise. */
async function demoSettings(
  config: Readonly<Config>,
  env: Record<string, string | undefined>,
  deps: CliDeps,
): Promise<{ config: Readonly<Config>; demo: DemoCredentials | undefined }> {
  const path = demoCredentialsPath(config.dbPath);
  const text = path === undefined ? undefined : await deps.readTextFile(path);
  const demo = text === undefined ? undefined : readDemoCredentials(text);
  if (demo && (env.FIELDGATE_DEMO === undefined || env.FIELDGATE_DEMO === "")) {
    return { config: loadConfig({ ...env, FIELDGATE_DEMO: "true" }), demo };
  }
  return { config, demo };
}

export const serve: Command = {
  name: "serve",
  summary: "run the HTTP server until SIGTERM or SIGINT",
  positionals: [],
  flags: {
    port: { type: "string", value: "N", description: "port to listen on (env PORT, default 8080; 0 picks a free one)" },
    host: { type: "string", value: "H", description: "address to bind (env HOST, default 127.0.0.1)" },
    "base-url": { type: "string", value: "URL", description: "public base URL (env FIELDGATE_BASE_URL)" },
  },
  // Checkpoints run on a timer (maintenance.ts) instead of inside request commits.
  storeOptions: { autoCheckpointPages: 0 },
  async run({ config: initial, env, io, deps, store, now }) {
    await seedIfEmpty(store, initial, io, deps, now);
    const { config, demo } = await demoSettings(initial, env, deps);
    const app = createApp({ config, store, clock: deps.clock, random: deps.random, log: deps.log, digest: deps.digest, demo });
    const listener = await deps.listen(app, { port: config.port, host: config.host });
    deps.log("listening", { url: listener.url, base_url: config.baseUrl, demo: config.demo });
    const maintenance = startMaintenance({ store, config, clock: deps.clock, log: deps.log });
    const signal = await deps.shutdownSignal();
    deps.log("shutting_down", { signal });
    maintenance.stop();
    await listener.close();
    deps.log("stopped", {});
    return 0;
  },
};
