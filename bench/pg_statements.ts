// `--pg-statements`: where PostgreSQL's time goes, statement by statement, from pg_stat_statements (loaded with
// shared_preload_libraries on the benchmark's throwaway cluster). Each scenario's counts are reset before it runs, so
// a breakdown covers that scenario alone (its warm-up included, which is why figures are per call, not per request).
import { openPostgres } from "../src/store/postgres/connect.ts";

/**
 * The server settings that load the extension: track=top leaves out statements inside functions; track_planning
 * counts planning apart from execution (a prepared statement PostgreSQL plans anew at each call shows it there).
 */
export const STATEMENT_SETTINGS = {
  shared_preload_libraries: "pg_stat_statements",
  "pg_stat_statements.track": "top",
  "pg_stat_statements.track_planning": "on",
};

/** One statement's totals over a scenario. */
export interface StatementRow {
  query: string;
  calls: number;
  /** Execution time (wall clock inside the server, not CPU) per call, µs. */
  execUsPerCall: number;
  /** Planning time per call, µs. */
  planUsPerCall: number;
  /** Calls that were planned (a generic plan reused is not). */
  plans: number;
  /** Share of the scenario's execution time, %. */
  share: number;
  blocksPerCall: number;
  walBytesPerCall: number;
}

/** Creates the extension in the database at `url` (its views live per database). */
export async function enableStatements(url: string): Promise<void> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    await pg.exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  } finally {
    await pg.close();
  }
}

/** Forgets every statement counted so far, in every database. */
export async function resetStatements(url: string): Promise<void> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    await pg.query("SELECT pg_stat_statements_reset()");
  } finally {
    await pg.close();
  }
}

/** The statements run in the database at `url` since the last reset, the costliest first (at most `limit`). */
export async function readStatements(url: string, limit = 8): Promise<StatementRow[]> {
  const pg = await openPostgres(url, { max: 1 });
  try {
    const rows = await pg.query(`SELECT query, calls, total_exec_time, total_plan_time, plans, shared_blks_hit + shared_blks_read + shared_blks_dirtied AS blocks,
        wal_bytes::float8 AS wal, sum(total_exec_time) OVER () AS all_time
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT LIKE '%pg_stat_statements%'
      ORDER BY total_exec_time DESC LIMIT $1`, [limit]);
    return rows.map((r) => {
      const calls = Number(r.calls);
      return {
        query: String(r.query).replace(/\s+/g, " ").trim(),
        calls,
        execUsPerCall: round(Number(r.total_exec_time) * 1000 / calls),
        planUsPerCall: round(Number(r.total_plan_time) * 1000 / calls),
        plans: Number(r.plans),
        share: round(100 * Number(r.total_exec_time) / Number(r.all_time)),
        blocksPerCall: round(Number(r.blocks) / calls),
        walBytesPerCall: round(Number(r.wal) / calls),
      };
    });
  } finally {
    await pg.close();
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

/** The breakdown as text lines: one per statement, its text cut to `width` characters. */
export function formatStatements(label: string, rows: readonly StatementRow[], width = 110): string[] {
  return [
    `${label}: calls, plans, µs/call planning, µs/call executing, % of exec time, blocks/call, WAL bytes/call, statement`,
    ...rows.map((r) => `  ${String(r.calls).padStart(7)}  ${String(r.plans).padStart(7)}  ${r.planUsPerCall.toFixed(1).padStart(6)}  ` +
      `${r.execUsPerCall.toFixed(1).padStart(7)}  ` +
      `${r.share.toFixed(1).padStart(5)}%  ${r.blocksPerCall.toFixed(1).padStart(6)}  ${r.walBytesPerCall.toFixed(0).padStart(6)}  ` +
      r.query.slice(0, width)),
  ];
}
