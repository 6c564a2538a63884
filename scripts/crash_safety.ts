// Crash safety: kill -9 the real server under token load, restart on the same file, prove nothing acknowledged is lost.
// Usage: node scripts/crash_safety.ts [--cycles N] [--load-ms MS]; exits 1 on any violation, prints one summary line.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/store/sqlite/store.ts";
import { freePort, startServer, type RunningServer } from "./lib/server.ts";
import { codeFlow, isActive, postJson, type Credentials, type DemoCredentialsFile } from "./lib/client.ts";

const { values: opts } = parseArgs({ options: { cycles: { type: "string", default: "3" }, "load-ms": { type: "string", default: "1500" }, workers: { type: "string", default: "16" } } });
const CYCLES = Number(opts.cycles);
const LOAD_MS = Number(opts["load-ms"]);
const WORKERS = Number(opts.workers);
const started = Date.now();

interface Ledger {
  /** Access tokens whose 200 reached us, with the client that may introspect them. */
  acknowledged: Map<string, Credentials>;
  /** Tokens whose revocation 200 reached us. */
  revoked: Map<string, Credentials>;
  transportErrors: number;
  /** Refresh rotations whose 200 reached us (their access tokens are in `acknowledged`). */
  rotations: number;
}

const violations: string[] = [];

/** One worker: client-credentials tokens in a loop, revoking every fifth, until told to stop or the server dies. */
async function worker(base: string, cc: Credentials, ledger: Ledger, stop: { now: boolean }, id: number): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    try {
      const res = await postJson(base, "/oauth/token", { grant_type: "client_credentials", ...cc });
      if (res.status !== 200) throw new Error(`token request answered ${res.status}`);
      const token = String(res.json!.access_token);
      if ((i + id) % 5 !== 0) {
        ledger.acknowledged.set(token, cc);
        continue;
      }
      const revoke = await postJson(base, "/oauth/revoke", { ...cc, token, token_type_hint: "access_token" });
      if (revoke.status === 200) ledger.revoked.set(token, cc);
      else ledger.acknowledged.set(token, cc);
    } catch (error) {
      // The kill cuts connections mid-request: those responses never reached us, so they promise nothing.
      if (stop.now || (error as Error).name === "TypeError") {
        ledger.transportErrors++;
        return;
      }
      violations.push(`unexpected answer under load: ${(error as Error).message}`);
      return;
    }
  }
}

/** A refresh chain through the real pages: every rotation whose 200 arrives adds its access token to the ledger. */
async function refreshChain(base: string, demo: DemoCredentialsFile, ledger: Ledger, stop: { now: boolean }): Promise<void> {
  const web = { client_id: demo.authorizationCodeClient.client_id, client_secret: demo.authorizationCodeClient.client_secret };
  try {
    const first = await codeFlow(base, demo);
    ledger.acknowledged.set(first.access_token, web);
    let refresh = first.refresh_token!;
    while (!stop.now) {
      const res = await postJson(base, "/oauth/token", { grant_type: "refresh_token", ...web, refresh_token: refresh });
      if (res.status !== 200) throw new Error(`refresh answered ${res.status} ${res.json?.error}`);
      ledger.acknowledged.set(String(res.json!.access_token), web);
      refresh = String(res.json!.refresh_token);
      ledger.rotations++;
    }
  } catch (error) {
    if ((error as Error).name === "TypeError") return;
    violations.push(`refresh chain: ${(error as Error).message}`);
  }
}

/** Checks every acknowledged token is active and every revoked one is not, 32 introspections at a time. */
async function verify(base: string, ledger: Ledger): Promise<{ lost: number; resurrected: number }> {
  const checks: Array<[string, Credentials, boolean]> = [
    ...[...ledger.acknowledged].map(([t, c]) => [t, c, true] as [string, Credentials, boolean]),
    ...[...ledger.revoked].map(([t, c]) => [t, c, false] as [string, Credentials, boolean]),
  ];
  let lost = 0;
  let resurrected = 0;
  for (let i = 0; i < checks.length; i += 32) {
    await Promise.all(checks.slice(i, i + 32).map(async ([token, client, expected]) => {
      const active = await isActive(base, client, token);
      if (expected && !active) lost++;
      if (!expected && active) resurrected++;
    }));
  }
  return { lost, resurrected };
}

async function integrity(db: string): Promise<string> {
  const store = openStore(db);
  try {
    return (await store.maintenance.integrityCheck()).join("; ");
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "fieldgate-crash-"));
  const db = join(dir, "fieldgate.db");
  const port = await freePort();
  const env = { FIELDGATE_PBKDF2_ITERATIONS: "1000" };
  const ledger: Ledger = { acknowledged: new Map(), revoked: new Map(), transportErrors: 0, rotations: 0 };
  const integrityResults: string[] = [];
  let server: RunningServer = await startServer({ port, db, env });
  const demo = JSON.parse(await readFile(join(dir, "demo-credentials.json"), "utf8")) as DemoCredentialsFile;
  const cc = demo.clientCredentialsClient;
  try {
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const stop = { now: false };
      const before = ledger.acknowledged.size;
      const load = [refreshChain(server.base, demo, ledger, stop), ...Array.from({ length: WORKERS }, (_, i) => worker(server.base, cc, ledger, stop, i))];
      // Kill at an unpredictable moment while requests are in flight.
      await new Promise((r) => setTimeout(r, LOAD_MS / 2 + Math.random() * LOAD_MS));
      await server.kill9();
      stop.now = true;
      await Promise.all(load);
      if (ledger.acknowledged.size === before) violations.push(`cycle ${cycle}: no token was issued before the kill`);
      const check = await integrity(db);
      integrityResults.push(check);
      if (check !== "ok") violations.push(`cycle ${cycle}: integrity_check ${check}`);
      server = await startServer({ port, db, env });
      const { lost, resurrected } = await verify(server.base, ledger);
      if (lost) violations.push(`cycle ${cycle}: ${lost} acknowledged tokens no longer active`);
      if (resurrected) violations.push(`cycle ${cycle}: ${resurrected} revoked tokens active again`);
      console.error(`cycle ${cycle}: ${ledger.acknowledged.size} acknowledged, ${ledger.revoked.size} revoked, lost ${lost}, resurrected ${resurrected}, integrity ${check}`);
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const verdict = violations.length ? "FAIL" : "ok";
  console.log(`crash-safety ${verdict}: ${CYCLES} kill -9 cycles, ${ledger.acknowledged.size} acknowledged tokens (${ledger.rotations} from refresh rotations) checked active, ` +
    `${ledger.revoked.size} revoked tokens checked inactive, ${ledger.transportErrors} requests cut by the kills, ` +
    `integrity_check ${integrityResults.join("/")}, ${violations.length} violations, ${seconds} s`);
  for (const v of violations) console.log(`  violation: ${v}`);
  process.exitCode = violations.length ? 1 : 0;
}

await main();
