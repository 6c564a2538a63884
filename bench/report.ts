// Benchmark output: the figures as a JSON document and as a plain-text table beside the targets.
import { ratio } from "./stats.ts";
import type { LoadResult } from "./load.ts";
import type { Target } from "./scenarios.ts";

export interface ScenarioResult extends LoadResult {
  id: string;
  title: string;
  server: string;
  /** Throughput as a fraction of the ceiling measured in the same run. */
  ratio: number;
  target?: Target;
  /**
   * For big-database rows: the same load against the empty-database server, measured right before and right after
   * the big-database runs (A B B A), so drift on a shared machine cancels out of the comparison.
   */
  paired?: { baseRequestsPerSecond: number[]; bigRequestsPerSecond: number[] };
}

export interface ServerResult {
  name: string;
  command: string;
  firstResponseMs: number;
  peakRssMiB: number;
  profile?: string;
}

export interface Report {
  date: string;
  machine: { cpus: number; model: string; node: string; platform: string };
  options: Record<string, unknown>;
  ceiling: LoadResult;
  /** The reference servers (bench/references.ts), measured right after the ceiling; empty with --no-references. */
  references: ScenarioResult[];
  scenarios: ScenarioResult[];
  servers: ServerResult[];
  seeding: Record<string, Record<string, number>>;
  notes: string[];
}

/** Attaches the ceiling ratio to a scenario's load result. */
export function withRatio(result: LoadResult, ceilingRps: number, meta: Omit<ScenarioResult, keyof LoadResult | "ratio">): ScenarioResult {
  return { ...meta, ...result, ratio: ratio(result.requestsPerSecond, ceilingRps) };
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** The scenario table as printed to stdout. */
export function formatTable(report: Report): string {
  const rows: string[][] = [["scenario", "req/s", "p50 ms", "p99 ms", "non-2xx", "bad body", "errors", "cpu µs/req", "ratio", "target"]];
  const c = report.ceiling;
  rows.push(["ceiling (bare node:http)", String(c.requestsPerSecond), fmt(c.latency.p50), fmt(c.latency.p99),
    String(c.non2xx), String(c.mismatches), String(c.errors), fmt(c.serverCpuUsPerRequest, 1), "1.00", ""]);
  for (const s of [...report.references, ...report.scenarios]) {
    rows.push([s.title, String(s.requestsPerSecond), fmt(s.latency.p50), fmt(s.latency.p99), String(s.non2xx),
      String(s.mismatches), String(s.errors), fmt(s.serverCpuUsPerRequest, 1), fmt(s.ratio), describeTarget(s, report)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  const out = [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)];
  out.push("");
  for (const server of report.servers) {
    out.push(`server ${server.name}: first response ${server.firstResponseMs} ms after spawn, peak RSS ${fmt(server.peakRssMiB, 1)} MiB`);
  }
  for (const note of report.notes) out.push(`note: ${note}`);
  return out.join("\n");
}

/** The target column: ok or MISS for each target the row has, and its scale against reference servers and peers. */
export function describeTarget(s: ScenarioResult, report: Pick<Report, "scenarios" | "references">): string {
  const t = s.target;
  if (!t) return "";
  const parts: string[] = [];
  if (t.ratio !== undefined) parts.push(`${s.ratio >= t.ratio ? "ok" : "MISS"} >=${t.ratio}`);
  if (t.p99 !== undefined) parts.push(`${s.latency.p99 <= t.p99 ? "ok" : "MISS"} p99<=${t.p99}`);
  const reference = (id: string) => report.references.find((r) => r.id === id);
  const against = t.atLeast === undefined ? undefined : reference(t.atLeast);
  if (against) {
    const times = s.requestsPerSecond / against.requestsPerSecond;
    parts.push(`${times >= 1 ? "ok" : "MISS"} ${times.toFixed(2)}x ${against.id}`);
  }
  const scale = t.beside === undefined ? undefined : reference(t.beside);
  for (const beside of [scale, ...(t.peers ?? []).map(reference)]) {
    if (beside) parts.push(`${(s.requestsPerSecond / beside.requestsPerSecond).toFixed(2)}x ${beside.id}`);
  }
  if (t.relativeTo !== undefined) {
    const change = relativeChange(s, report);
    if (change !== undefined) {
      const against = s.paired ? `${t.relativeTo}, paired ABBA` : t.relativeTo;
      parts.push(`${change >= -0.1 ? "ok" : "MISS"} ${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)}% vs ${against}`);
    }
  }
  return parts.join(", ");
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Throughput change of a big-database row against its base scenario: from the paired runs when there are any
 * (mean of the big runs over mean of the empty runs around them), else against the base row of the table.
 */
export function relativeChange(s: ScenarioResult, report: Pick<Report, "scenarios">): number | undefined {
  if (s.paired && s.paired.baseRequestsPerSecond.length > 0 && s.paired.bigRequestsPerSecond.length > 0) {
    return mean(s.paired.bigRequestsPerSecond) / mean(s.paired.baseRequestsPerSecond) - 1;
  }
  const base = report.scenarios.find((x) => x.id === s.target?.relativeTo);
  return base ? s.requestsPerSecond / base.requestsPerSecond - 1 : undefined;
}

/** One row of the store comparison (bench/stores.ts): a scenario on a store with a number of instances. */
export interface StoreTableRow extends LoadResult {
  title: string;
  store: string;
  instances: number;
}

/** The store comparison as printed to stdout: each scenario's rows together, so the stores read side by side. */
export function formatStoreTable(rows: readonly StoreTableRow[], notes: readonly string[]): string {
  const header = ["scenario", "store", "inst", "req/s", "p50 ms", "p99 ms", "non-2xx", "errors", "app cpu µs/req", "db cpu µs/req", "round trips/req"];
  const titles = [...new Set(rows.map((r) => r.title))];
  const body = titles.flatMap((title) => rows.filter((r) => r.title === title)).map((r) => [
    r.title, r.store, String(r.instances), String(r.requestsPerSecond), fmt(r.latency.p50), fmt(r.latency.p99),
    String(r.non2xx + r.mismatches), String(r.errors), fmt(r.serverCpuUsPerRequest, 1),
    fmt(r.databaseCpuUsPerRequest ?? Number.NaN, 1), fmt(r.roundTripsPerRequest ?? Number.NaN, 2),
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line), "", ...notes.map((n) => `note: ${n}`)]
    .join("\n");
}
