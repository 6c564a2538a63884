// `npm run bench`: seeds fresh databases, measures the ceiling and every scenario against a real server child
// process on 127.0.0.1, prints a table and writes the figures to bench/results/<timestamp>.json.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { combineRuns, runLoad, type LoadOptions, type LoadResult } from "./load.ts";
import { seedDatabase, type Seeded } from "./seed.ts";
import { startServer, type ServerProcess } from "./spawn.ts";
import { ratio } from "./stats.ts";
import { formatStoreTable, formatTable, withRatio, type Report, type ScenarioResult, type ServerResult } from "./report.ts";
import { compareStores } from "./stores.ts";
import { PEER_INTROSPECTION, PEERS, REFERENCES, SCENARIOS, comparedWith, mintAccessToken, type Reference, type Scenario } from "./scenarios.ts";
import { denoTaskArgs } from "../scripts/lib/deno_tasks.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const CLI_ENTRY = join(ROOT, "src/adapters/node.ts");
const DENO = join(ROOT, "node_modules/.bin/deno");
const LOCAL_ENTRY = join(ROOT, "bench/server.ts");
// The heap settings of package.json's start script (docs/operations.md, "Memory").
const NODE_HEAP_FLAGS = ["--max-semi-space-size=2", "--max-old-space-size=256"];

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    connections: { type: "string", default: "10" },
    only: { type: "string" },
    "no-big": { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false },
    server: { type: "string", default: "auto" },
    "refresh-pool": { type: "string", default: "80000" },
    keep: { type: "boolean", default: false },
    // The comparison points (bench/references.ts) are measured unless this is given.
    "no-references": { type: "boolean", default: false },
    // The peers the issue names (bench/peers/serve.ts), beside token issuance; `npm run bench:peers` installs them.
    peers: { type: "boolean", default: false },
    // serve --workers N: server processes sharing the port; CPU and RSS are summed over all of them.
    workers: { type: "string", default: "1" },
    // Extra runtime flags for the server child, e.g. --server-flags=--max-semi-space-size=2 (Node) or
    // --server-flags=--v8-flags=--max-semi-space-size=2 (Deno)
    "server-flags": { type: "string", default: "" },
    // The runtime that serves: node (src/adapters/node.ts serve) or deno (what `deno task start` runs: Deno.serve,
    // with the task's V8 flags). The ceiling is always the bare node:http server, so ratios compare across runtimes.
    runtime: { type: "string", default: "node" },
    // sqlite: the scenarios above on the SQLite store. postgres: token issuance, total_count and refresh on SQLite and
    // on PostgreSQL with 1 and --instances instances, in one run, on a throwaway cluster (bench/stores.ts).
    store: { type: "string", default: "sqlite" },
    instances: { type: "string", default: "2" },
    // PostgreSQL's synchronous_commit for --store postgres: off is SQLite's durability (WAL, synchronous=NORMAL).
    "pg-synchronous-commit": { type: "string", default: "off" },
    // --store postgres: load pg_stat_statements and print each scenario's costliest statements (bench/pg_statements.ts).
    "pg-statements": { type: "boolean", default: false },
  },
});
if (args.runtime !== "node" && args.runtime !== "deno") {
  console.error(`bench: --runtime is node or deno, not ${args.runtime}`);
  process.exit(2);
}
const onDeno = args.runtime === "deno";
if (args.store !== "sqlite" && args.store !== "postgres") {
  console.error(`bench: --store is sqlite or postgres, not ${args.store}`);
  process.exit(2);
}
const instances = Number(args.instances);
if (!Number.isInteger(instances) || instances < 1 || instances > 8) {
  console.error(`bench: --instances is a whole number from 1 to 8, not ${args.instances}`);
  process.exit(2);
}
const synchronousCommit = args["pg-synchronous-commit"];
if (synchronousCommit !== "on" && synchronousCommit !== "off") {
  console.error(`bench: --pg-synchronous-commit is on or off, not ${synchronousCommit}`);
  process.exit(2);
}
if (args.store === "postgres" && (onDeno || Number(args.workers) > 1 || args.server === "local" || args.peers)) {
  console.error("bench: --store postgres serves with Node's `serve`, one process per instance (no --runtime deno, --workers, --server local or --peers)");
  process.exit(2);
}
if (onDeno && (Number(args.workers) > 1 || args.server === "local")) {
  console.error("bench: --runtime deno serves as `deno task start` does; --workers and --server local are Node's");
  process.exit(2);
}

const PEERS_DIR = join(ROOT, "bench/peers");
if (args.peers && !existsSync(join(PEERS_DIR, "node_modules"))) {
  console.error("bench: --peers needs the peers installed: npm run bench:peers (or npm ci --prefix bench/peers)");
  process.exit(2);
}

const load: LoadOptions = {
  connections: Number(args.connections),
  warmupSeconds: Number(args.warmup),
  durationSeconds: Math.max(1, Number(args.duration)),
};
const only = args.only ? new Set(args.only.split(",")) : undefined;
const wanted = (s: Scenario) => !only || only.has(s.id);
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const resultsDir = join(ROOT, "bench/results");
const work = mkdtempSync(join(tmpdir(), "fieldgate-bench-"));
const notes: string[] = [];

/** The real entry point once the CLI has `serve --db`; the bench-local server otherwise. */
function serverCommand(db: string): { name: string; args: string[] } {
  const cli = existsSync(CLI_ENTRY) && args.server !== "local";
  const workers = Number(args.workers) > 1 ? ["--workers", String(Number(args.workers))] : [];
  if (onDeno) return { name: "deno task start", args: [...denoTaskArgs(new URL("..", import.meta.url), "start"), "--port", "{port}", "--host", "127.0.0.1", "--db", db] };
  if (cli) return { name: "serve", args: [CLI_ENTRY, "serve", "--port", "{port}", "--host", "127.0.0.1", "--db", db, ...workers] };
  return { name: "bench/server.ts", args: [LOCAL_ENTRY, "--port", "{port}", "--db", db] };
}

async function startApp(name: string, db: string): Promise<{ server: ServerProcess; info: ServerResult }> {
  const command = serverCommand(db);
  const profileDir = join(resultsDir, `${stamp}-profiles`);
  const flags = [
    // What `npm start` passes (deno task start carries its own through --v8-flags); --server-flags may override.
    ...(onDeno ? [] : NODE_HEAP_FLAGS),
    ...(args["server-flags"] ? args["server-flags"].split(" ").filter(Boolean) : []),
    // Both runtimes take the same three flags.
    ...(args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []),
  ];
  const server = await startServer({
    // Deno's flags go after its `run` subcommand, Node's before the script.
    args: onDeno ? [command.args[0]!, ...flags, ...command.args.slice(1)] : command.args,
    executable: onDeno ? DENO : undefined,
    nodeFlags: onDeno ? [] : flags,
    env: { FIELDGATE_DEMO: "false" },
    readyPath: "/healthz",
    logFile: join(work, `${name}.log`),
  });
  const info: ServerResult = {
    name,
    command: command.name,
    firstResponseMs: server.firstResponseMs,
    peakRssMiB: Number.NaN,
    profile: args["cpu-prof"] ? join(profileDir, `${name}.cpuprofile`) : undefined,
  };
  return { server, info };
}

/**
 * Every server first serves one unreported /healthz run: JIT and caches warm up the same way whatever scenario comes
 * first, so the big-database rows are not a cold process compared with a warm one (they were, until 2026-11-22).
 */
const WARM_UP = SCENARIOS.filter((s) => s.id === "health");

async function measureServer(
  name: string,
  seeded: Seeded,
  scenarios: Scenario[],
  ceilingRps: number,
  options: { warmUp?: Scenario[]; references?: Map<string, ReferenceServer> } = {},
) {
  const { warmUp = [], references = new Map() } = options;
  const { server, info } = await startApp(name, seeded.path);
  const results: ScenarioResult[] = [];
  const referenceResults: ScenarioResult[] = [];
  try {
    const accessToken = await mintAccessToken(server.origin, seeded);
    for (const scenario of warmUp) {
      process.stderr.write(`  ${scenario.id}: ${scenario.title} (warm-up, not reported)\n`);
      await runLoad(await scenario.build(server.origin, seeded, accessToken), { ...load, serverCpuSeconds: server.cpuSeconds });
    }
    for (const scenario of scenarios) {
      const compared = comparedWith(scenario.target).flatMap((id) => references.get(id) ?? []);
      const before: LoadResult[] = [];
      for (const reference of compared) before.push(await reference.measure(`before ${scenario.id}`));
      process.stderr.write(`  ${scenario.id}: ${scenario.title}\n`);
      const result = await runLoad(await scenario.build(server.origin, seeded, accessToken), { ...load, serverCpuSeconds: server.cpuSeconds });
      // After the scenario in the reverse order, so each comparison's two runs sit symmetrically around it.
      const after: LoadResult[] = [];
      for (const [i, reference] of [...compared.entries()].reverse()) after[i] = await reference.measure(`after ${scenario.id}`);
      for (const [i, { reference: { id, title } }] of compared.entries()) {
        referenceResults.push(withRatio(combineRuns([before[i]!, after[i]!]), ceilingRps, { id, title, server: id }));
      }
      if (result.exhausted) notes.push(`${scenario.id}: the refresh-token pool ran out; raise --refresh-pool`);
      if (!server.alive()) {
        notes.push(`${scenario.id}: the ${name} server exited during the run`);
        process.stderr.write(`server ${name} exited; last log lines:\n${server.logTail()}\n`);
        break;
      }
      results.push(withRatio(result, ceilingRps, {
        id: scenario.id, title: scenario.title, server: name, target: scenario.target,
      }));
    }
    info.peakRssMiB = server.peakRssMiB();
  } finally {
    await server.stop();
  }
  return { results, referenceResults, info };
}

/**
 * The big-database rows, each measured twice between two runs of its base scenario on a fresh empty-database
 * server (A B B A): on a shared 2-core machine req/s drifts by more than the 10 % the comparison is about, and a
 * comparison across a minute of other scenarios measured the drift rather than the data. Both servers are warmed
 * up the same way first. The row shows the second big run; the comparison uses all four.
 */
async function measurePaired(emptyDb: Seeded, bigDb: Seeded, bigScenarios: Scenario[], ceilingRps: number) {
  const empty = await startApp("empty-paired", emptyDb.path);
  const big = await startApp("big", bigDb.path);
  const results: ScenarioResult[] = [];
  try {
    const tokens = { empty: await mintAccessToken(empty.server.origin, emptyDb), big: await mintAccessToken(big.server.origin, bigDb) };
    const run = async (which: "empty" | "big", scenario: Scenario) => {
      const app = which === "empty" ? empty : big;
      const seeded = which === "empty" ? emptyDb : bigDb;
      const result = await runLoad(await scenario.build(app.server.origin, seeded, tokens[which]), { ...load, serverCpuSeconds: app.server.cpuSeconds });
      // A server that died shows as a row of connection errors; say so, with its last words.
      if (!app.server.alive()) {
        notes.push(`${scenario.id}: the ${app.info.name} server exited during the run`);
        process.stderr.write(`server ${app.info.name} exited; last log lines:\n${app.server.logTail()}\n`);
      }
      return result;
    };
    for (const scenario of WARM_UP) {
      process.stderr.write(`  ${scenario.id}: ${scenario.title} (warm-up of both servers, not reported)\n`);
      await run("empty", scenario);
      await run("big", scenario);
    }
    for (const scenario of bigScenarios) {
      const base = SCENARIOS.find((s) => s.id === scenario.target?.relativeTo);
      if (!base) continue;
      process.stderr.write(`  ${base.id} / ${scenario.id}: ${scenario.title}, paired A B B A\n`);
      const first = await run("empty", base);
      const firstBig = await run("big", scenario);
      const second = await run("big", scenario);
      const last = await run("empty", base);
      const result = withRatio(second, ceilingRps, { id: scenario.id, title: scenario.title, server: "big", target: scenario.target });
      result.paired = {
        baseRequestsPerSecond: [first.requestsPerSecond, last.requestsPerSecond],
        bigRequestsPerSecond: [firstBig.requestsPerSecond, second.requestsPerSecond],
      };
      results.push(result);
    }
    empty.info.peakRssMiB = empty.server.peakRssMiB();
    big.info.peakRssMiB = big.server.peakRssMiB();
  } finally {
    await empty.server.stop();
    await big.server.stop();
  }
  return { results, infos: [big.info] };
}

async function measureCeiling() {
  const server = await startServer({
    args: [join(ROOT, "bench/ceiling.ts"), "--port", "{port}"],
    readyPath: "/",
    logFile: join(work, "ceiling.log"),
  });
  try {
    return await runLoad({ origin: server.origin, method: "GET", path: "/" }, { ...load, serverCpuSeconds: server.cpuSeconds });
  } finally {
    await server.stop();
  }
}

/** A reference server kept up through the run, measured on demand. */
interface ReferenceServer {
  reference: Reference;
  /** One run of the reference's load; `when` names it in the progress lines. */
  measure(when: string): Promise<LoadResult>;
  stop(): Promise<void>;
}

/**
 * The comparison servers the wanted scenarios are measured beside, started once: the reference servers
 * (bench/references.ts) unless --no-references, and its peers (bench/peers/serve.ts) with --peers. Each is measured
 * right before and right after its scenario (A B A), so drift over the run cancels out of the comparison as in
 * measurePaired: measured a minute apart, the same reference moved by a quarter on this host.
 */
async function startReferences(seeded: Seeded, scenarios: Scenario[], chosen: readonly Reference[]): Promise<Map<string, ReferenceServer>> {
  const started = new Map<string, ReferenceServer>();
  const ids = new Set(scenarios.flatMap((s) => comparedWith(s.target)));
  for (const reference of chosen.filter((r) => ids.has(r.id))) {
    const server = await startServer({
      args: [join(ROOT, reference.server.script), "--kind", reference.server.kind, "--port", "{port}"],
      // oidc-provider, as a deployment runs it; the other servers do not read it.
      env: { NODE_ENV: "production" },
      readyPath: reference.server.readyPath,
      logFile: join(work, `${reference.id}.log`),
    });
    const scenario = await reference.build(server.origin, seeded);
    started.set(reference.id, {
      reference,
      measure: (when) => {
        process.stderr.write(`  ${reference.title} (${when})\n`);
        return runLoad(scenario, { ...load, serverCpuSeconds: server.cpuSeconds });
      },
      stop: () => server.stop(),
    });
  }
  return started;
}

/** The installed peer packages and their versions, as bench/peers/package-lock.json pinned them. */
function peerVersions(): string {
  const { dependencies } = JSON.parse(readFileSync(join(PEERS_DIR, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  return Object.keys(dependencies).map((name) => {
    const installed = JSON.parse(readFileSync(join(PEERS_DIR, "node_modules", name, "package.json"), "utf8")) as { version: string };
    return `${name} ${installed.version}`;
  }).join(", ");
}

/** `--store postgres`: the store comparison instead of the scenario table; its figures go to <stamp>-stores.json. */
async function mainStores(): Promise<void> {
  const started = performance.now();
  const { rows, notes, statements } = await compareStores({
    work,
    load,
    instances,
    only,
    refreshPool: Number(args["refresh-pool"]),
    synchronousCommit: synchronousCommit as "on" | "off",
    serverArgs: (database) => serverCommand(database).args,
    nodeFlags: [...NODE_HEAP_FLAGS, ...(args["server-flags"] ? args["server-flags"].split(" ").filter(Boolean) : [])],
    statements: args["pg-statements"],
    references: !args["no-references"],
  });
  for (const row of rows.filter((r) => r.exhausted)) notes.push(`${row.scenario} on ${row.store}-${row.instances}: the refresh-token pool ran out; raise --refresh-pool`);
  const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version, platform: process.platform };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${stamp}-stores.json`);
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), machine, options: { ...load, instances }, rows, notes, statements }, null, 2) + "\n");
  console.log(formatStoreTable(rows, notes));
  if (statements.length > 0) console.log(["", ...statements].join("\n"));
  console.log(`\nfigures written to ${file} (${Math.round((performance.now() - started) / 1000)} s)`);
}

async function main(): Promise<void> {
  if (args.store === "postgres") return mainStores();
  const started = performance.now();
  const small = SCENARIOS.filter((s) => s.database === "empty" && wanted(s));
  const big = args["no-big"] ? [] : SCENARIOS.filter((s) => s.database === "big" && wanted(s));
  process.stderr.write(`seeding databases in ${work}\n`);
  const seeding: Report["seeding"] = {};
  const emptyDb = await seedDatabase(join(work, "empty.db"), {
    refreshPool: small.some((s) => s.id === "refresh") ? Number(args["refresh-pool"]) : 0,
    fields: 500, fillerTokens: 0, fillerFields: 0, fillerOrganizations: 0,
  });
  seeding.empty = emptyDb.timings;
  const bigDb = big.length === 0 ? undefined : await seedDatabase(join(work, "big.db"), {
    refreshPool: 0, fields: 500, fillerTokens: 1_000_000, fillerFields: 100_000, fillerOrganizations: 1_000,
  });
  if (bigDb) seeding.big = bigDb.timings;

  process.stderr.write("ceiling\n");
  const ceilingBefore = await measureCeiling();
  const scenarios: ScenarioResult[] = [];
  const references: ScenarioResult[] = [];
  const servers: ServerResult[] = [];
  if (small.length > 0) {
    process.stderr.write("fresh database\n");
    const chosen = [...(args["no-references"] ? [] : REFERENCES), ...(args.peers ? [...PEERS, PEER_INTROSPECTION] : [])];
    const referenceServers = await startReferences(emptyDb, small, chosen);
    try {
      const run = await measureServer("empty", emptyDb, small, ceilingBefore.requestsPerSecond, { warmUp: WARM_UP, references: referenceServers });
      scenarios.push(...run.results);
      references.push(...run.referenceResults);
      servers.push(run.info);
    } finally {
      for (const reference of referenceServers.values()) await reference.stop();
    }
  }
  if (bigDb) {
    process.stderr.write("database with 1,000,000 tokens and 100,000 fields\n");
    const run = await measurePaired(emptyDb, bigDb, big, ceilingBefore.requestsPerSecond);
    scenarios.push(...run.results);
    servers.push(...run.infos);
  }
  // The ceiling again at the end; ratios use the higher of the two, so a busy moment cannot flatter them.
  process.stderr.write("ceiling again\n");
  const ceilingAfter = await measureCeiling();
  const ceiling = ceilingAfter.requestsPerSecond > ceilingBefore.requestsPerSecond ? ceilingAfter : ceilingBefore;
  for (const s of [...references, ...scenarios]) s.ratio = ratio(s.requestsPerSecond, ceiling.requestsPerSecond);
  notes.push(`ceiling measured twice: ${ceilingBefore.requestsPerSecond} and ${ceilingAfter.requestsPerSecond} req/s; ratios use the higher`);
  if (args.peers) notes.push(`peers: ${peerVersions()}, served by bench/peers/serve.ts`);
  notes.push(Number(args.workers) > 1
    ? `serve --workers ${Number(args.workers)}: cpu µs/req and peak RSS are summed over the primary and its workers`
    : "one server process (npm run bench -- --workers 2 for several)");
  const report: Report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version, platform: process.platform },
    options: { ...load, server: serverCommand("DB").name, serverFlags: args["server-flags"], cpuProfile: args["cpu-prof"], workers: Number(args.workers) },
    ceiling,
    references,
    scenarios,
    servers,
    seeding,
    notes,
  };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${stamp}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  console.log(formatTable(report));
  console.log(`\nfigures written to ${file} (${Math.round((performance.now() - started) / 1000)} s)`);
}

try {
  await main();
} finally {
  if (!args.keep) rmSync(work, { recursive: true, force: true });
}
