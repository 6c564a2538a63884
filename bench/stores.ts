// `npm run bench -- --store postgres`: token issuance, total_count and refresh rotation on SQLite and on PostgreSQL
// with one and N instances, in one run, over the same seeded rows, with database round trips and CPU per request.
import { join } from "node:path";
import { copyToPostgres } from "./seed_postgres.ts";
import { startServer, treeCpuSeconds, type ServerProcess } from "./spawn.ts";
import { combineRuns, runLoad, type LoadOptions, type LoadResult, type LoadScenario } from "./load.ts";
import { mintAccessToken, REFERENCES, SCENARIOS, type Scenario } from "./scenarios.ts";
import { seedReferenceDatabase } from "./pg_reference_db.ts";
import { seedDatabase, type Seeded } from "./seed.ts";
import { findPostgresBinaries, startPostgresCluster, type PostgresCluster } from "../scripts/lib/postgres_cluster.ts";
import { openPostgres } from "../src/store/postgres/connect.ts";
import { enableStatements, formatStatements, readStatements, resetStatements, STATEMENT_SETTINGS } from "./pg_statements.ts";

/**
 * The scenarios this comparison runs: one write path, two read paths (a resource server's introspection and
 * total_count), the write path with the most locking, and token issuance and total_count with DPoP proofs.
 */
export const STORE_SCENARIOS = ["token", "count", "introspect", "refresh", "token-dpop", "count-dpop"] as const;

/** One setup measured: a store and how many instances share it. */
export interface StoreSetup {
  store: "sqlite" | "postgres";
  instances: number;
  /** The SQLite file or the PostgreSQL URL. */
  database: string;
}

/** One scenario on one setup. */
export interface StoreRow extends LoadResult {
  scenario: string;
  title: string;
  store: StoreSetup["store"];
  instances: number;
}

export interface StoreComparisonOptions {
  /** Scratch directory for the SQLite file and the servers' logs. */
  work: string;
  load: LoadOptions;
  /** Instances of the second PostgreSQL setup (the first has one). */
  instances: number;
  /** Scenario ids to run, a subset of STORE_SCENARIOS (all by default). */
  only?: ReadonlySet<string>;
  refreshPool: number;
  /** PostgreSQL's synchronous_commit: off matches SQLite's synchronous=NORMAL in WAL mode, on waits for a WAL flush. */
  synchronousCommit: "on" | "off";
  /** The fieldgate server command for a database: the executable's arguments, `{port}` in place of the port. */
  serverArgs: (database: string) => string[];
  nodeFlags: string[];
  /** Measure bench/references_postgres.ts's minimal servers beside the scenarios (default true). */
  references?: boolean;
  /** Load pg_stat_statements and report each PostgreSQL scenario's costliest statements (bench/pg_statements.ts). */
  statements?: boolean;
}

/** Bearer secret of the servers' /metrics, which the round-trip counter is read from. */
const METRICS_TOKEN = "bench-metrics-token-0123456789";

/**
 * Seeds one SQLite file, copies it into one PostgreSQL database per PostgreSQL setup (before any refresh token of the
 * pool is spent), then measures SQLite, PostgreSQL with one instance and PostgreSQL with `instances`, in that order;
 * each reference runs just before and just after the one-instance scenario it stands beside (A B A), and its row
 * combines the two runs.
 */
export async function compareStores(
  options: StoreComparisonOptions,
): Promise<{ rows: StoreRow[]; notes: string[]; statements: string[] }> {
  const binDir = findPostgresBinaries();
  if (!binDir) throw new Error("--store postgres needs PostgreSQL's initdb and pg_ctl (apt-get install postgresql)");
  const scenarios = SCENARIOS.filter((s) =>
    (STORE_SCENARIOS as readonly string[]).includes(s.id) && (!options.only || options.only.has(s.id))
  );
  process.stderr.write("seeding SQLite, starting PostgreSQL\n");
  const seeded = await seedDatabase(join(options.work, "stores.db"), {
    refreshPool: scenarios.some((s) => s.id === "refresh") ? options.refreshPool : 0,
    fields: 500, fillerTokens: 0, fillerFields: 0, fillerOrganizations: 0,
  });
  // Durable like SQLite's WAL with synchronous=NORMAL by default: fsync and full-page writes on, commits not waiting
  // for their WAL flush (a crash may lose the last moments' commits, never consistency).
  const cluster = await startPostgresCluster(binDir, {
    purpose: "benchmark",
    settings: { synchronous_commit: options.synchronousCommit, ...(options.statements ? STATEMENT_SETTINGS : {}) },
  });
  const setups: StoreSetup[] = [{ store: "sqlite", instances: 1, database: seeded.path }];
  const databases: string[] = [];
  const quiesce = () => quiet(cluster, databases);
  let version = "";
  for (const instances of [...new Set([1, options.instances])]) {
    const { url, serverVersion } = await createDatabase(cluster, `bench_${instances}`);
    databases.push(url);
    version = serverVersion;
    if (options.statements) await enableStatements(url);
    const { rows } = await copyToPostgres(seeded.path, url);
    process.stderr.write(`copied ${rows} rows to PostgreSQL for ${instances} instance(s)\n`);
    setups.push({ store: "postgres", instances, database: url });
  }
  const rows: StoreRow[] = [];
  const statements: string[] = [];
  const [sqlite, ...pgSetups] = setups;
  rows.push(...await measureSetup(sqlite!, scenarios, seeded, cluster, options, statements, quiesce));
  let references: References | undefined;
  if (options.references !== false) {
    const { url } = await createDatabase(cluster, "bench_reference");
    databases.push(url);
    await seedReferenceDatabase(url, seeded, Math.floor(Date.now() / 1000));
    references = await startReferences(url, scenarios, seeded, cluster, options, quiesce);
  }
  try {
    for (const setup of pgSetups) {
      // The references bracket the one-instance scenarios they stand beside (measured just before and just after),
      // so a slower minute of the machine moves both sides of a ratio alike.
      const beside = setup.instances === 1 ? references : undefined;
      rows.push(...await measureSetup(setup, scenarios, seeded, cluster, options, statements, quiesce, beside));
    }
    rows.push(...references?.rows() ?? []);
  } finally {
    await references?.stop();
  }
  const notes = [
    `PostgreSQL ${version} on this machine, synchronous_commit=${options.synchronousCommit}, fsync on; ` +
    "SQLite in WAL mode with synchronous=NORMAL",
    `${options.load.connections} connections dealt over the instances; app cpu is summed over them, db cpu is PostgreSQL's processes`,
    "round trips per request from the instances' fieldgate_database_round_trips_total; SQLite has none",
  ];
  return { rows, notes, statements };
}

async function createDatabase(cluster: PostgresCluster, name: string): Promise<{ url: string; serverVersion: string }> {
  const admin = await openPostgres(cluster.url, { max: 1 });
  let serverVersion: string;
  try {
    // The name is one of this module's constants plus a number; CREATE DATABASE takes no parameters.
    await admin.exec(`CREATE DATABASE "${name}"`);
    serverVersion = String((await admin.query("SHOW server_version"))[0]?.server_version ?? "");
  } finally {
    await admin.close();
  }
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return { url: url.href, serverVersion };
}

async function measureSetup(
  setup: StoreSetup,
  scenarios: readonly Scenario[],
  seeded: Seeded,
  cluster: PostgresCluster,
  options: StoreComparisonOptions,
  statements: string[],
  quiesce: () => Promise<void>,
  references?: References,
): Promise<StoreRow[]> {
  const label = `${setup.store}-${setup.instances}`;
  process.stderr.write(`${setup.store}, ${setup.instances} instance(s)\n`);
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < setup.instances; i++) {
      servers.push(await startServer({
        args: options.serverArgs(setup.database),
        nodeFlags: options.nodeFlags,
        // One issuer for every instance, as behind one load balancer: DPoP proofs name it, whichever instance serves.
        env: { FIELDGATE_DEMO: "false", FIELDGATE_METRICS_TOKEN: METRICS_TOKEN, FIELDGATE_BASE_URL: "http://localhost:8080" },
        readyPath: "/healthz",
        logFile: join(options.work, `${label}-${i + 1}.log`),
        timeoutMs: 30_000,
      }));
    }
    const origins = servers.map((s) => s.origin);
    const postgres = setup.store === "postgres";
    const load: LoadOptions = {
      ...options.load,
      origins,
      serverCpuSeconds: () => servers.reduce((n, s) => n + s.cpuSeconds(), 0),
      databaseCpuSeconds: postgres ? () => databaseCpu(cluster) : undefined,
      databaseRoundTrips: postgres ? () => roundTrips(origins) : undefined,
    };
    const health = SCENARIOS.find((s) => s.id === "health")!;
    const accessToken = await mintAccessToken(origins[0]!, seeded);
    process.stderr.write("  health (warm-up, not reported)\n");
    await runLoad(await health.build(origins[0]!, seeded, accessToken), load);
    const rows: StoreRow[] = [];
    for (const scenario of scenarios) {
      process.stderr.write(`  ${scenario.id}: ${scenario.title}\n`);
      const counted = postgres && options.statements === true;
      await references?.measure(scenario.id);
      await quiesce();
      if (counted) await resetStatements(setup.database);
      const result = await runLoad(await scenario.build(origins[0]!, seeded, accessToken), load);
      await references?.measure(scenario.id);
      if (counted) statements.push(...formatStatements(`${scenario.id} on ${label}`, await readStatements(setup.database)));
      rows.push({ ...result, scenario: scenario.id, title: scenario.title, store: setup.store, instances: setup.instances });
      const dead = servers.find((s) => !s.alive());
      if (dead) throw new Error(`a ${label} server exited during ${scenario.id}:\n${dead.logTail()}`);
    }
    return rows;
  } finally {
    for (const server of servers) await server.stop();
  }
}

/** Each scenario's minimal references (bench/references_postgres.ts): which server kind, under which title. */
const PG_REFERENCES: readonly { scenario: string; kind: string; title: string }[] = [
  { scenario: "token", kind: "token1", title: "ref 1: JSON, random token, SHA-256, INSERT" },
  { scenario: "token", kind: "token2", title: "ref 2: ref 1 + client SELECT, secret check" },
  { scenario: "count", kind: "count", title: "ref: bearer SELECT, fixed JSON" },
  { scenario: "refresh", kind: "refresh", title: "ref: client SELECT, UPDATE, INSERT pair" },
];

/** The references' servers, measured beside the scenarios they stand for. */
interface References {
  /** Runs once more the references of scenario `id` (none for a scenario without one). */
  measure(id: string): Promise<void>;
  /** One row per reference measured, its runs combined. */
  rows(): StoreRow[];
  stop(): Promise<void>;
}

/**
 * The references of the wanted scenarios, one server each on the reference database at `url`, each load built once
 * (the refresh one hands out every pool token once, over all its runs), under the same load options as the scenario
 * they stand beside (the bearer one presents the reference's own token).
 */
async function startReferences(
  url: string,
  scenarios: readonly Scenario[],
  seeded: Seeded,
  cluster: PostgresCluster,
  options: StoreComparisonOptions,
  quiesce: () => Promise<void>,
): Promise<References> {
  const bearer = REFERENCES.find((r) => r.id === "ref-bearer")!;
  const started: { ref: (typeof PG_REFERENCES)[number]; server: ServerProcess; built: LoadScenario; runs: LoadResult[] }[] = [];
  const servers: ServerProcess[] = [];
  const stop = async () => {
    for (const server of servers) await server.stop();
  };
  try {
    for (const ref of PG_REFERENCES.filter((r) => scenarios.some((s) => s.id === r.scenario))) {
      const server = await startServer({
        args: [join(import.meta.dirname, "references_postgres.ts"), "--kind", ref.kind, "--port", "{port}", "--database", url],
        nodeFlags: options.nodeFlags,
        readyPath: "/",
        logFile: join(options.work, `reference-${ref.kind}.log`),
      });
      servers.push(server);
      const scenario = SCENARIOS.find((s) => s.id === ref.scenario)!;
      const built = ref.kind === "count" ? await bearer.build(server.origin, seeded) : await scenario.build(server.origin, seeded, "");
      started.push({ ref, server, built, runs: [] });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    async measure(id) {
      for (const { ref, server, built, runs } of started.filter((s) => s.ref.scenario === id)) {
        process.stderr.write(`  reference ${ref.kind}\n`);
        await quiesce();
        runs.push(await runLoad(built, {
          ...options.load,
          origins: [server.origin],
          serverCpuSeconds: () => server.cpuSeconds(),
          databaseCpuSeconds: () => databaseCpu(cluster),
        }));
        if (!server.alive()) throw new Error(`the ${ref.kind} reference exited:\n${server.logTail()}`);
      }
    },
    rows: () => started.filter((s) => s.runs.length > 0).map(({ ref, runs }) => ({
      ...combineRuns(runs), scenario: `ref-${ref.kind}`, title: ref.title, store: "postgres" as const, instances: 1,
    })),
    stop,
  };
}

/**
 * Leaves the cluster with no maintenance owed before a measured run: each database vacuumed and analyzed, then a
 * checkpoint. Otherwise autovacuum and the checkpointer take up, at moments of their choosing, what earlier runs
 * wrote, and their CPU counts as the database CPU of whichever run is measured then: in one run the vacuum of the
 * references' new token rows fell in fieldgate's total_count, and that of fieldgate's token run in its refresh run,
 * whose database CPU per request doubled. What a run writes, and its maintenance during the run, stay its own.
 */
async function quiet(cluster: PostgresCluster, databases: readonly string[]): Promise<void> {
  for (const url of databases) {
    const pg = await openPostgres(url, { max: 1, statementTimeoutMs: 600_000 });
    try {
      await pg.exec("VACUUM (ANALYZE)");
    } finally {
      await pg.close();
    }
  }
  const admin = await openPostgres(cluster.url, { max: 1, statementTimeoutMs: 600_000 });
  try {
    await admin.exec("CHECKPOINT");
  } finally {
    await admin.close();
  }
}

/** CPU seconds of PostgreSQL's postmaster and every backend; NaN when its pid cannot be read. */
function databaseCpu(cluster: PostgresCluster): number {
  const pid = cluster.pid();
  return pid === undefined ? Number.NaN : treeCpuSeconds(pid);
}

/** The instances' database round trips and answered requests (the scrapes left out) so far, summed over their /metrics. */
async function roundTrips(origins: readonly string[]): Promise<{ roundTrips: number; requests: number }> {
  const total = { roundTrips: 0, requests: 0 };
  for (const origin of origins) {
    const response = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await response.text();
    const match = /^fieldgate_database_round_trips_total (\d+)$/m.exec(text);
    if (!response.ok || !match) throw new Error(`${origin}/metrics has no round-trip counter (${response.status})`);
    total.roundTrips += Number(match[1]);
    for (const line of text.matchAll(/^fieldgate_http_requests_total\{route="([^"]*)"[^}]*\} (\d+)$/gm)) {
      if (line[1] !== "/metrics") total.requests += Number(line[2]);
    }
  }
  return total;
}
