// Soak: mixed load on the real server over loopback for a bounded time; reports RSS, unexpected answers, row counts.
// Usage: node scripts/soak.ts [--seconds 60] [--workers 8] [--heap-mb N]; exits 1 on unexpected answers or unbounded tables.
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { freePort, startServer } from "./lib/server.ts";
import { authorizeCode, exchangeCode, postJson, signedInBrowser, type DemoCredentialsFile } from "./lib/client.ts";

const { values: opts } = parseArgs({ options: { seconds: { type: "string", default: "60" }, workers: { type: "string", default: "8" }, "heap-mb": { type: "string" } } });
const SECONDS = Number(opts.seconds);
const WORKERS = Number(opts.workers);
const RETENTION = 5;

const counts = new Map<string, number>();
const unexpected = new Map<string, number>();
const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/** Records an answer: `ok` lists the statuses this operation may legitimately get. */
function record(op: string, status: number, ok: readonly number[]): void {
  bump(counts, op);
  if (!ok.includes(status)) bump(unexpected, `${op} ${status}`);
}

/** The WAL file's size in bytes; 0 while it does not exist. */
function walBytes(db: string): Promise<number> {
  return stat(`${db}-wal`).then((s) => s.size, () => 0);
}

/** A busy server must keep its WAL bounded: checkpoints restart it every second (src/store/sqlite/checkpoint.ts). */
const MAX_WAL_MIB = 256;

function rssKiB(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, "utf8").then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0));
}

/** A POST from 127.0.0.2, so the attacker-side failures do not throttle the well-behaved clients on 127.0.0.1. */
function postFromOtherAddress(url: string, type: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", localAddress: "127.0.0.2", headers: { "content-type": type } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function tableCounts(db: string): Record<string, number> {
  const conn = new DatabaseSync(db, { readOnly: true });
  try {
    const out: Record<string, number> = {};
    for (const table of ["tokens", "authorization_codes", "sessions", "audit_events", "grant_families"]) {
      out[table] = Number((conn.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
    }
    return out;
  } finally {
    conn.close();
  }
}

async function graphql(base: string, token: string): Promise<number> {
  const res = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: "{ fields(first: 5) { total_count edges { node { name area_ha } } } }" }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** One well-behaved worker: client credentials token, a few GraphQL calls with it, then revoke it. */
async function ccWorker(base: string, demo: DemoCredentialsFile, until: number): Promise<void> {
  const cc = demo.clientCredentialsClient;
  while (Date.now() < until) {
    const issued = await postJson(base, "/oauth/token", { grant_type: "client_credentials", ...cc });
    record("token client_credentials", issued.status, [200]);
    if (issued.status !== 200) continue;
    const token = String(issued.json!.access_token);
    for (let i = 0; i < 3; i++) record("graphql", await graphql(base, token), [200]);
    record("revoke", (await postJson(base, "/oauth/revoke", { ...cc, token })).status, [200]);
  }
}

/** The code-flow client: a new approval now and then, refresh rotations in between, GraphQL with each token. */
async function webWorker(base: string, demo: DemoCredentialsFile, until: number): Promise<void> {
  const web = { client_id: demo.authorizationCodeClient.client_id, client_secret: demo.authorizationCodeClient.client_secret };
  let browser = await signedInBrowser(base, demo);
  let signedInAt = Date.now();
  let approvals = 0;
  while (Date.now() < until) {
    let pair;
    try {
      // Every fourth approval is abandoned (the client never exchanges its code), as happens with real users: those
      // codes expire, and purge must remove them. A used code stays while its grant has live tokens (store.ts).
      if (++approvals % 4 === 0) {
        await authorizeCode(browser, demo);
        record("code abandoned", 200, [200]);
        continue;
      }
      pair = await exchangeCode(base, demo, await authorizeCode(browser, demo));
      record("token authorization_code", 200, [200]);
    } catch (error) {
      record(`code flow: ${(error as Error).message}`, 0, [200]);
      break;
    }
    for (let i = 0; i < 20 && Date.now() < until; i++) {
      record("graphql", await graphql(base, pair.access_token), [200]);
      const res = await postJson(base, "/oauth/token", { grant_type: "refresh_token", ...web, refresh_token: pair.refresh_token! });
      record("token refresh_token", res.status, [200]);
      if (res.status !== 200) break;
      pair = res.json as unknown as typeof pair;
    }
    // Sessions are short in the soak so that purge has expired ones to remove: sign in again like a person would.
    if (Date.now() - signedInAt > 30_000) {
      browser = await signedInBrowser(base, demo);
      signedInAt = Date.now();
      record("sign-in", 303, [303]);
    }
  }
}

/** The hostile side, from another address: wrong passwords and wrong client secrets, throttled as they should be. */
async function attacker(base: string, demo: DemoCredentialsFile, until: number): Promise<void> {
  while (Date.now() < until) {
    const login = new URLSearchParams({ username: demo.username, password: "wrong-password", csrf: "x", next: "/account" }).toString();
    record("failed sign-in", await postFromOtherAddress(`${base}/signin`, "application/x-www-form-urlencoded", login), [400, 403, 429]);
    const auth = JSON.stringify({ grant_type: "client_credentials", client_id: demo.clientCredentialsClient.client_id, client_secret: "fgcs_wrong" });
    record("failed client auth", await postFromOtherAddress(`${base}/oauth/token`, "application/json", auth), [401, 429]);
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "fieldgate-soak-"));
  const db = join(dir, "fieldgate.db");
  const env = {
    FIELDGATE_PBKDF2_ITERATIONS: "1000",
    FIELDGATE_RETENTION: String(RETENTION),
    FIELDGATE_AUDIT_RETENTION: String(RETENTION),
    FIELDGATE_CLEANUP_INTERVAL: "5",
    // Long enough that a code never expires between redirect and exchange on a busy machine.
    FIELDGATE_CODE_TTL: "10",
    FIELDGATE_SESSION_TTL: "60",
    FIELDGATE_REFRESH_TTL: "60",
  };
  // --heap-mb caps the server's V8 heap: surviving the whole soak under a small cap shows memory is bounded.
  const heap: Record<string, string> = opts["heap-mb"] ? { NODE_OPTIONS: `--max-old-space-size=${Number(opts["heap-mb"])}` } : {};
  const server = await startServer({ port: await freePort(), db, env: { ...env, ...heap } });
  const demo = JSON.parse(await readFile(join(dir, "demo-credentials.json"), "utf8")) as DemoCredentialsFile;
  try {
    // Warm up so the start figure is the steady-state heap, not the empty process.
    await Promise.all(Array.from({ length: 4 }, () => ccWorker(server.base, demo, Date.now() + 2_000)));
    const rssStart = await rssKiB(server.child.pid!);
    const samples: number[] = [rssStart];
    const until = Date.now() + SECONDS * 1000;
    const walSamples: number[] = [];
    const sampler = setInterval(() => {
      void rssKiB(server.child.pid!).then((v) => samples.push(v));
      void walBytes(db).then((v) => walSamples.push(v));
    }, 5_000);
    const rows: Array<Record<string, number>> = [];
    const rowSampler = setInterval(() => rows.push(tableCounts(db)), 10_000);
    await Promise.all([
      ...Array.from({ length: WORKERS }, () => ccWorker(server.base, demo, until)),
      webWorker(server.base, demo, until),
      webWorker(server.base, demo, until),
      attacker(server.base, demo, until),
    ]);
    clearInterval(sampler);
    clearInterval(rowSampler);
    const rssEnd = await rssKiB(server.child.pid!);
    const end = tableCounts(db);
    const purges = server.output().split("\n").filter((l) => l.includes('"event":"purged"')).map((l) => JSON.parse(l) as Record<string, number>);
    const purged = { codes: 0, tokens: 0, sessions: 0, auditEvents: 0, families: 0 };
    for (const p of purges) for (const k of Object.keys(purged) as (keyof typeof purged)[]) purged[k] += p[k] ?? 0;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.error("operations:", Object.fromEntries(counts));
    console.error("RSS MiB every 5 s:", samples.map((k) => (k / 1024).toFixed(0)).join(" "));
    console.error("WAL MiB every 5 s:", walSamples.map((b) => (b / 1048576).toFixed(0)).join(" "));
    const walMaxMiB = Math.max(0, ...walSamples) / 1048576;
    console.error("row counts every 10 s:", rows.map((r) => `codes ${r.authorization_codes} audit ${r.audit_events} tokens ${r.tokens}`).join(" | "));
    console.error("purged in total:", purged, `in ${purges.length} runs`);
    const mb = (k: number) => (k / 1024).toFixed(1);
    // Expired codes and old audit rows must be going away, or the file grows without bound; so must the WAL.
    const bounded = purges.length > 0 && purged.codes > 0 && purged.auditEvents > 0;
    const walBounded = walMaxMiB <= MAX_WAL_MIB;
    const failed = unexpected.size > 0 || !bounded || !walBounded;
    console.log(`soak ${failed ? "FAIL" : "ok"}: ${SECONDS} s, ${total} requests (${(total / SECONDS).toFixed(0)}/s), ` +
      `RSS start ${mb(rssStart)} MiB end ${mb(rssEnd)} MiB max ${mb(Math.max(...samples))} MiB, WAL max ${walMaxMiB.toFixed(1)} MiB, ` +
      `unexpected answers ${[...unexpected.values()].reduce((a, b) => a + b, 0)}, ` +
      `rows at end: tokens ${end.tokens} codes ${end.authorization_codes} sessions ${end.sessions} audit ${end.audit_events}, ` +
      `purged: codes ${purged.codes} audit ${purged.auditEvents} tokens ${purged.tokens} sessions ${purged.sessions}`);
    for (const [k, v] of unexpected) console.log(`  unexpected: ${k} x${v}`);
    if (!bounded) console.log("  purge did not remove expired codes and audit rows");
    if (!walBounded) console.log(`  the WAL grew past ${MAX_WAL_MIB} MiB: checkpoints are not restarting it`);
    process.exitCode = failed ? 1 : 0;
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
