// Imported bcrypt digests on the real server (docs/performance.md#bcrypt-checks): an unrelated client-credentials
// token request's latency alone and while eight connections send wrong passwords to an imported cost-12 account,
// then how long a wrong password takes for an unknown username, a native account and imported cost-4 and cost-12 ones.
// Usage: node scripts/bcrypt_timing.ts [--seconds 10] [--samples 10] [--runtime node|deno] [--attack bcrypt12|native]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import { openStore } from "../src/store/sqlite/store.ts";
import { hashPassword, sha256Hex } from "../src/crypto/hash.ts";
import { loadConfig } from "../src/config.ts";
import { cryptoRandom } from "../src/deps.ts";
import { browser, hiddenFields, postJson } from "./lib/client.ts";
import { freePort } from "./lib/server.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PASSWORD = "the right password";
const CC = { client_id: "timing-cc", client_secret: "fgcs_timing-secret-" + "x".repeat(32) };
/** Accounts by what their wrong password is checked against; "unknown" names nobody. */
const ACCOUNTS = { unknown: "nobody@timing.example", native: "native@timing.example", bcrypt4: "cost4@timing.example", bcrypt12: "cost12@timing.example" };

async function seed(path: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const store = openStore(path, { now: now * 1000 });
  const org = await store.organizations.ensure("timing", { name: "Timing", now });
  const robot = await store.users.insert({ username: "robot@timing.example", kind: "integration", now });
  await store.organizations.addMember(org.id, robot.id, { now });
  await store.clients.insert({
    clientId: CC.client_id, secretHash: await sha256Hex(CC.client_secret), name: "Timing", grantType: "client_credentials",
    redirectUris: [], scope: "fields:read", integrationUserId: robot.id, now,
  });
  const iterations = loadConfig({}).pbkdf2Iterations;
  const hashes = {
    [ACCOUNTS.native]: await hashPassword(PASSWORD, { iterations, random: cryptoRandom }),
    [ACCOUNTS.bcrypt4]: bcrypt.hashSync(PASSWORD, 4),
    [ACCOUNTS.bcrypt12]: bcrypt.hashSync(PASSWORD, 12),
  };
  for (const [username, passwordHash] of Object.entries(hashes)) {
    const user = await store.users.insert({ username, kind: "person", passwordHash, now });
    await store.organizations.addMember(org.id, user.id, { now });
  }
  await store.close();
}

async function serve(db: string, runtime: string) {
  const port = await freePort();
  const [command, args] = runtime === "deno"
    ? [join(ROOT, "node_modules/.bin/deno"), ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "src/adapters/deno.ts"]]
    : [process.execPath, ["src/adapters/node.ts"]];
  // Lockouts off: this measures the cost of checks, not the throttle that would end the attack.
  const env = { ...process.env, HOST: "127.0.0.1", FIELDGATE_DEMO: "false", FIELDGATE_THROTTLE_MAX_FAILURES: "10000" };
  const child = spawn(command, [...args, "serve", "--port", String(port), "--db", db], { cwd: ROOT, env, stdio: "ignore" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${base}/healthz`).then((r) => r.ok, () => false)); i++) {
    if (i > 300 || child.exitCode !== null) throw new Error("server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return { base, stop: async () => (child.kill("SIGTERM"), await once(child, "exit")) };
}

/** Milliseconds one wrong password takes, after fetching the form (not timed) in a fresh browser. */
async function wrongPassword(base: string, username: string): Promise<number> {
  const b = browser(base);
  const fields = hiddenFields(await (await b.send("/signin")).text(), "/signin");
  const started = performance.now();
  const res = await b.form("/signin", { ...fields, username, password: "not the password" });
  await res.arrayBuffer();
  if (res.status !== 400) throw new Error(`a wrong password for ${username} answered ${res.status}`);
  return performance.now() - started;
}

/** Token request latencies, one request at a time, until `stop` resolves. */
async function tokenLatencies(base: string, stop: Promise<void>): Promise<number[]> {
  let done = false;
  void stop.then(() => (done = true));
  const out: number[] = [];
  while (!done) {
    const started = performance.now();
    const res = await postJson(base, "/oauth/token", { grant_type: "client_credentials", ...CC });
    if (res.status !== 200) throw new Error(`token answered ${res.status}`);
    out.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 20));
  }
  return out;
}

/** One attacking connection: the same form, wrong passwords for `username` back to back. */
async function attack(base: string, username: string, stop: Promise<void>, tally: Map<number, number>): Promise<void> {
  let done = false;
  void stop.then(() => (done = true));
  const b = browser(base);
  const fields = hiddenFields(await (await b.send("/signin")).text(), "/signin");
  while (!done) {
    const res = await b.form("/signin", { ...fields, username, password: "guess" });
    await res.arrayBuffer();
    tally.set(res.status, (tally.get(res.status) ?? 0) + 1);
  }
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;

async function latencyPhase(base: string, seconds: number, attackers: { count: number; username: string }) {
  const stop = new Promise<void>((r) => setTimeout(r, seconds * 1000));
  const tally = new Map<number, number>();
  const [latencies] = await Promise.all([
    tokenLatencies(base, stop),
    ...Array.from({ length: attackers.count }, () => attack(base, attackers.username, stop, tally)),
  ]);
  const answers = [...tally].map(([status, n]) => `${n}×${status}`).join(", ") || "none";
  console.log(`token with ${attackers.count} connections attacking ${attackers.username}: n=${latencies.length} median ${ms(quantile(latencies, 0.5))}, ` +
    `p95 ${ms(quantile(latencies, 0.95))}; sign-in answers ${answers}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "10" },
      samples: { type: "string", default: "10" },
      runtime: { type: "string", default: "node" },
      attack: { type: "string", default: "bcrypt12" },
    },
  });
  const target = ACCOUNTS[values.attack as keyof typeof ACCOUNTS];
  if (!target) throw new Error(`--attack names one of ${Object.keys(ACCOUNTS).join(", ")}`);
  const dir = await mkdtemp(join(tmpdir(), "fieldgate-bcrypt-"));
  const db = join(dir, "timing.db");
  await seed(db);
  const server = await serve(db, values.runtime!);
  try {
    await wrongPassword(server.base, ACCOUNTS.bcrypt4); // warm: the first check starts a thread, if there are any
    await latencyPhase(server.base, Number(values.seconds), { count: 0, username: target });
    await latencyPhase(server.base, Number(values.seconds), { count: 8, username: target });
    const timings = new Map<string, number[]>(Object.keys(ACCOUNTS).map((k) => [k, []]));
    // Interleaved, so drift in the machine's load spreads over every kind alike.
    for (let i = 0; i < Number(values.samples); i++) {
      for (const [kind, username] of Object.entries(ACCOUNTS)) timings.get(kind)!.push(await wrongPassword(server.base, username));
    }
    for (const [kind, list] of timings) {
      console.log(`wrong password, ${kind}: min ${ms(Math.min(...list))}, median ${ms(quantile(list, 0.5))}, max ${ms(Math.max(...list))}`);
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
