// Stress: an innocent client's latency alone, then under each attack of issue 27, against the real server on loopback.
// Usage: node scripts/stress.ts [--seconds 8] [--json] [--only graphql|signin|success|queue]; exits 1 when a target is missed.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort, startServer, type RunningServer } from "./lib/server.ts";
import { authorizeCode, exchangeCode, postJson, signedInBrowser, type DemoCredentialsFile } from "./lib/client.ts";
import { ADDRESSES, ATTACKS, innocentProbes, type Attack, type AttackContext, type Probe } from "./lib/stress_attacks.ts";
import { canBind, pause, send } from "./lib/stress_http.ts";
import { formatPhase, summarizeProbe, TARGET, type PhaseReport, type ProbeSample } from "./lib/stress_report.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Each probe sends at most one request per interval: an innocent client, not a load generator. */
const PROBE_INTERVAL_MS = 100;
/** After an attack, how long the server may take to finish the work it queued before the next phase starts. */
const SETTLE_LIMIT_MS = 60_000;
/** How many times the innocent person tries to sign in before a phase, a second apart. */
const SIGN_IN_ATTEMPTS = 30;
/** Prepared codes must outlive the phase: the server's longest code lifetime (600 s) bounds `--seconds`. */
const MAX_SECONDS = 300;

interface Options {
  seconds: number;
  json: boolean;
  only?: Attack["id"];
}

/** Reads the command line; a bad value is a RangeError naming the option. */
function parseOptions(args: string[]): Options {
  const { values } = parseArgs({ args, options: { seconds: { type: "string", default: "8" }, json: { type: "boolean", default: false }, only: { type: "string" } } });
  const seconds = Number(values.seconds);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SECONDS) throw new RangeError(`--seconds must be an integer from 1 to ${MAX_SECONDS}`);
  const only = values.only === undefined ? undefined : ATTACKS.find((a) => a.id === values.only)?.id;
  if (values.only !== undefined && !only) throw new RangeError(`--only must be one of ${ATTACKS.map((a) => a.id).join(", ")}`);
  return { seconds, json: values.json, only };
}

interface Setup {
  base: string;
  db: string;
  demo: DemoCredentialsFile;
  attacker: AttackContext["attacker"];
  innocents: AttackContext["innocents"];
}

/** `users add` through the real CLI: an account with a random password in organization `org`. */
async function addUser(db: string, org: string, username: string): Promise<{ username: string; password: string }> {
  const user = { username, password: `stress-${crypto.randomUUID()}` };
  const child = spawn(process.execPath, ["src/adapters/node.ts", "users", "add", "--db", db, "--username", user.username,
    "--org", org, "--password-stdin"], { cwd: ROOT, stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(`${user.password}\n`);
  const [code] = await once(child, "exit") as [number | null];
  if (code !== 0) throw new Error(`users add exited with ${code}: ${stderr}`);
  return user;
}

/**
 * The demo seed (the innocent person and clients), the attacker's account (another tenant) and GraphQL token, and two
 * more innocent people for the sign-in queue attack.
 */
async function setUp(server: RunningServer, dir: string, db: string): Promise<Setup> {
  const demo = JSON.parse(await readFile(join(dir, "demo-credentials.json"), "utf8")) as DemoCredentialsFile;
  const attacker = await addUser(db, "stress-attacker", "stress-attacker");
  const innocent = (name: string) => addUser(db, "stress-innocent", name);
  const innocents = {
    returning: [await innocent("innocent-a1"), await innocent("innocent-a2")],
    newBrowser: [await innocent("innocent-b1"), await innocent("innocent-b2")],
  } as const;
  // The attacker holds an ordinary fields:read token of the demo web app, for its own account.
  const browser = await signedInBrowser(server.base, { ...demo, ...attacker });
  const tokens = await exchangeCode(server.base, demo, await authorizeCode(browser, demo));
  return { base: server.base, db, demo, attacker: { ...attacker, accessToken: tokens.access_token }, innocents };
}

/**
 * The innocent person signed in, anew each phase (an earlier attack may have ended older sessions). A fixed server
 * may still be refusing sign-ins for a moment after an attack (its password queue full: 503), so this retries for a
 * while before giving up.
 */
async function signInPatiently(s: Setup) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await signedInBrowser(s.base, s.demo);
    } catch (error) {
      if (attempt === SIGN_IN_ATTEMPTS) throw error;
      await pause(1_000);
    }
  }
}

/** A fresh token and `count` unused PKCE codes for the innocent client, made before the phase so they cost nothing in it. */
async function prepareInnocent(s: Setup, count: number) {
  const cc = await postJson(s.base, "/oauth/token", { grant_type: "client_credentials", ...s.demo.clientCredentialsClient });
  if (cc.status !== 200) throw new Error(`client credentials answered ${cc.status}`);
  const browser = await signInPatiently(s);
  const codes = [];
  for (let i = 0; i < count; i++) codes.push(await authorizeCode(browser, s.demo));
  return { base: s.base, accessToken: String(cc.json!.access_token), codes, client: s.demo.authorizationCodeClient };
}

/** Runs one probe every PROBE_INTERVAL_MS until `until` (performance.now() time). */
async function probeLoop(probe: Probe, until: number): Promise<ProbeSample[]> {
  const samples: ProbeSample[] = [];
  while (performance.now() < until) {
    const started = performance.now();
    const sample = await probe.run();
    if (!sample) break;
    samples.push(sample);
    await pause(PROBE_INTERVAL_MS - (performance.now() - started));
  }
  return samples;
}

/**
 * Waits until three GET /signin in a row are quick again (the target's bound, or the baseline's p99 if higher), so
 * the work an attack queued does not spill into the next phase; gives up after SETTLE_LIMIT_MS.
 */
async function settle(base: string, baseline: PhaseReport): Promise<{ settleMs: number; settled: boolean }> {
  const signin = baseline.probes["GET /signin"]!;
  const quick = Math.max(TARGET.ratio * signin.median, TARGET.floorMs, signin.p99);
  const started = performance.now();
  let inARow = 0;
  while (performance.now() - started < SETTLE_LIMIT_MS) {
    const answer = await send(`${base}/signin`, { timeoutMs: SETTLE_LIMIT_MS });
    inARow = answer.status === 200 && answer.ms <= quick ? inARow + 1 : 0;
    if (inARow === 3) return { settleMs: Math.round(performance.now() - started), settled: true };
    await pause(PROBE_INTERVAL_MS);
  }
  return { settleMs: Math.round(performance.now() - started), settled: false };
}

/** The client addresses the server's audit log recorded for sign-in failures since `sinceSeconds`. */
function addressesSeen(db: string, sinceSeconds: number): string[] {
  const conn = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = conn.prepare(`SELECT DISTINCT ip FROM audit_events WHERE at >= ? AND event IN ('sign_in_failed', 'throttled')
      AND ip IS NOT NULL ORDER BY ip`).all(sinceSeconds) as { ip: string }[];
    return rows.map((r) => r.ip);
  } finally {
    conn.close();
  }
}

/** Audit events recorded since `sinceSeconds`, by event and, for `throttled`, its surface. */
function auditedSince(db: string, sinceSeconds: number): Record<string, number> {
  const conn = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = conn.prepare(`SELECT event || coalesce(' ' || json_extract(detail, '$.surface'), '') AS kind, count(*) AS n
      FROM audit_events WHERE at >= ? AND event IN ('sign_in_failed', 'throttled') GROUP BY kind ORDER BY kind`).all(sinceSeconds) as { kind: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  } finally {
    conn.close();
  }
}

/** One phase: the four probes for `seconds` (or the attack's own), with `attack` running alongside (none for the baseline). */
async function runPhase(s: Setup, o: { seconds: number; attack?: Attack; baseline?: PhaseReport }): Promise<PhaseReport> {
  const ms = (o.attack?.seconds ?? o.seconds) * 1000;
  const probes = innocentProbes(await prepareInnocent(s, Math.ceil(ms / PROBE_INTERVAL_MS) + 1));
  const tally = new Map<string, number>();
  const stop = new AbortController();
  const sinceSeconds = Math.floor(Date.now() / 1000);
  const until = performance.now() + ms;
  const attacking = o.attack?.run({ base: s.base, attacker: s.attacker, innocents: s.innocents, signal: stop.signal, tally });
  const samples = await Promise.all(probes.map((p) => probeLoop(p, until)));
  stop.abort();
  const verdict = (await attacking) ?? undefined;
  const summaries = Object.fromEntries(probes.map((p, i) => {
    const baseline = o.baseline?.probes[p.name]?.median ?? summarizeProbe(samples[i]!, 0).median;
    return [p.name, summarizeProbe(samples[i]!, baseline)];
  }));
  const report: PhaseReport = {
    phase: o.attack?.id ?? "baseline",
    title: o.attack?.title ?? "baseline: the innocent client alone",
    probes: summaries,
    attacker: Object.fromEntries(tally),
    ...(verdict ? { verdict } : {}),
    // An attack with its own verdict is judged by it; its probes' figures are shown, not judged (see Attack.verdict).
    meets: verdict?.meets ?? Object.values(summaries).every((p) => p.meets),
  };
  if (o.attack?.id === "signin" || o.attack?.id === "queue") report.addressesSeen = addressesSeen(s.db, sinceSeconds);
  if (o.attack?.id === "queue") report.audited = auditedSince(s.db, sinceSeconds);
  if (o.attack && o.baseline) Object.assign(report, await settle(s.base, o.baseline));
  return report;
}

/** Every source address the attacks use must be bindable, or the attacks would share the innocent's address. */
async function checkAddresses(): Promise<void> {
  for (const address of [...ADDRESSES.failingSignIns, ADDRESSES.successfulSignIns, ADDRESSES.graphql, ...ADDRESSES.signInQueue]) {
    if (!(await canBind(address))) throw new Error(`cannot send from ${address}: this machine does not route 127.0.0.0/8 to loopback`);
  }
}

/** What the figures depend on: the runtime, the cores, and how busy the machine was at the start. */
function machine() {
  return { node: process.version, cores: availableParallelism(), loadAverage: Math.round(loadavg()[0]! * 10) / 10 };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  await checkAddresses();
  const dir = await mkdtemp(join(tmpdir(), "fieldgate-stress-"));
  const db = join(dir, "fieldgate.db");
  // Real settings throughout (600,000 PBKDF2 iterations, no proxy trust); only the code lifetime is raised, so that
  // codes made before a phase are still valid at its end.
  const server = await startServer({ port: await freePort(), db, env: { FIELDGATE_CODE_TTL: "600" } });
  try {
    const s = await setUp(server, dir, db);
    const print = (report: PhaseReport) => options.json || console.log(`${formatPhase(report)}\n`);
    const m = machine();
    if (!options.json) {
      console.log(`stress: ${options.seconds} s per phase against ${s.base} (node ${m.node}, ${m.cores} cores, ` +
        `load average ${m.loadAverage}: figures from a busy machine are noisy)\n`);
    }
    const baseline = await runPhase(s, { seconds: options.seconds });
    print(baseline);
    const phases = [baseline];
    for (const attack of ATTACKS.filter((a) => !options.only || a.id === options.only)) {
      phases.push(await runPhase(s, { seconds: options.seconds, attack, baseline }));
      print(phases.at(-1)!);
      if (server.child.exitCode !== null) throw new Error(`the server exited during ${attack.id}:\n${server.output().slice(-2_000)}`);
    }
    const missed = phases.slice(1).filter((p) => !p.meets).map((p) => p.phase);
    if (options.json) console.log(JSON.stringify({ seconds: options.seconds, machine: m, target: TARGET, phases, missed }, null, 2));
    else console.log(missed.length === 0 ? "stress: target met under every attack" : `stress: target MISSED under ${missed.join(", ")}`);
    process.exitCode = missed.length === 0 ? 0 : 1;
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
