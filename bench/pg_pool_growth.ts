// `node bench/pg_pool_growth.ts [--statements N]`: client CPU per statement as a pool ages, postgres.js's own pool
// of 4 connections beside fieldgate's (src/store/postgres/connect.ts, 4 lanes of one connection), one statement at a
// time after a burst that opened every connection, on a throwaway cluster. postgres.js 3.4's pool keeps a slot in
// its connection queues for each connection shifted off while others stay queued, and scans them at every move:
// its CPU per statement grows with the statements sent; the lanes' should not.
import { parseArgs } from "node:util";
import postgres from "postgres";
import { findPostgresBinaries, startPostgresCluster } from "../scripts/lib/postgres_cluster.ts";
import { openPostgres } from "../src/store/postgres/connect.ts";

const { values } = parseArgs({ options: { statements: { type: "string", default: "160000" } } });
const total = Number(values.statements);
const binDir = findPostgresBinaries();
if (!binDir) throw new Error("needs PostgreSQL's initdb and pg_ctl (apt-get install postgresql)");
const cluster = await startPostgresCluster(binDir, { purpose: "pool growth", settings: { synchronous_commit: "off" } });

type Run = (text: string) => Promise<unknown>;

/** CPU µs per statement over each quarter of `total` sequential statements, after 4 concurrent ones. */
async function measure(name: string, run: Run): Promise<void> {
  await Promise.all([1, 2, 3, 4].map(() => run("SELECT pg_sleep(0.05)")));
  const quarters: string[] = [];
  for (let q = 0; q < 4; q++) {
    const before = process.cpuUsage();
    for (let i = 0; i < total / 4; i++) await run("SELECT 1");
    const used = process.cpuUsage(before);
    quarters.push(((used.user + used.system) / (total / 4)).toFixed(1).padStart(6));
  }
  console.log(`${name.padEnd(32)} ${quarters.join(" ")}  µs per statement, by quarter of ${total}`);
}

try {
  const sql = postgres(cluster.url, { max: 4, fetch_types: false, onnotice: () => {} });
  await measure("postgres.js pool of 4", (text) => sql.unsafe(text, [], { prepare: true }));
  await sql.end();
  const pg = await openPostgres(cluster.url, { max: 4 });
  await measure("fieldgate lanes, 4 connections", (text) => pg.query(text));
  await pg.close();
} finally {
  await cluster.halt();
}
