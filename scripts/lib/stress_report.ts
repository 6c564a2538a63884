// The pure half of `npm run stress`: the attack documents, per-probe statistics, the target and the report.
import { percentile } from "../../bench/stats.ts";

/** The target for an innocent probe under attack (issue 27, "Measure it"). */
export const TARGET = {
  /** The median may grow to this many times its unloaded figure... */
  ratio: 3,
  /** ...or stay under this many milliseconds, which nobody notices. */
  floorMs: 10,
  /** No probe may wait longer than this, whatever its median. */
  maxMs: 1_000,
} as const;

/** How often the expensive selection is repeated: about 11.6 KB, inside the 2,000-token limit (issue 27). */
export const REPEATS = 284;

/**
 * The two expensive documents of the GraphQL attack: one refused by the cost limit only after validation, one that
 * stays under every limit and is answered. Both repeat one selection, which graphql-js merges (no aliases needed).
 */
export const ATTACK_SELECTIONS = {
  refused: "organizations { fields { total_count } } ",
  answered: "fields { page_info { has_next_page } } ",
} as const;

export type AttackVariant = keyof typeof ATTACK_SELECTIONS;

/**
 * The `n`-th expensive document of `variant`: bit k of `n` doubles the space after repetition k, so every `n`
 * gives a distinct text (a document cache keyed by the exact text misses) with the same tokens and meaning.
 */
export function expensiveDocument(variant: AttackVariant, n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`document number must be a non-negative integer, got ${n}`);
  const unit = ATTACK_SELECTIONS[variant];
  const parts: string[] = ["{ "];
  let bits = n;
  for (let k = 0; k < REPEATS; k++) {
    parts.push(bits % 2 === 1 ? `${unit} ` : unit);
    bits = Math.floor(bits / 2);
  }
  parts.push("}");
  return parts.join("");
}

/** One innocent request: how long it took and whether it got the answer it should. */
export interface ProbeSample {
  ms: number;
  ok: boolean;
  /** For a failure: the status it got, or why it got none ("timeout"). */
  outcome?: string;
}

/** One probe's figures in one phase; times in milliseconds, `ratio` to the baseline median. */
export interface ProbeSummary {
  count: number;
  median: number;
  p99: number;
  max: number;
  failures: number;
  /** The failures by what they got. */
  failedWith: Record<string, number>;
  /** Requests that took longer than TARGET.maxMs, answered or not. */
  slow: number;
  ratio: number;
  meets: boolean;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Summarises one probe's samples and judges them against `baselineMedian` (the same probe, unloaded). */
export function summarizeProbe(samples: readonly ProbeSample[], baselineMedian: number): ProbeSummary {
  const sorted = Float64Array.from(samples, (s) => s.ms).sort();
  const median = percentile(sorted, 50);
  const failedWith = new Map<string, number>();
  for (const s of samples) if (!s.ok) bump(failedWith, s.outcome ?? "unexpected answer");
  const summary = {
    count: samples.length,
    median: round1(median),
    p99: round1(percentile(sorted, 99)),
    max: round1(sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN),
    failures: samples.filter((s) => !s.ok).length,
    failedWith: Object.fromEntries(failedWith),
    slow: samples.filter((s) => s.ms > TARGET.maxMs).length,
    ratio: baselineMedian > 0 ? Math.round((round1(median) / baselineMedian) * 100) / 100 : Number.NaN,
  };
  return { ...summary, meets: meetsTarget(summary, baselineMedian) };
}

/**
 * The verdict: the median within TARGET.ratio times the baseline's or under TARGET.floorMs, nothing failed
 * and nothing waited past TARGET.maxMs. A probe that got no answer at all cannot meet it.
 */
export function meetsTarget(s: { count: number; median: number; max: number; failures: number }, baselineMedian: number): boolean {
  if (s.count === 0) return false;
  const quick = s.median < TARGET.floorMs || (baselineMedian > 0 && s.median <= TARGET.ratio * baselineMedian);
  return quick && s.failures === 0 && s.max <= TARGET.maxMs;
}

/** What one GraphQL answer was, for the attacker's tally: "200 data", "200 COST_LIMIT_EXCEEDED", "429". */
export function graphqlOutcome(status: number, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `${status} not JSON`;
  }
  const errors = (parsed as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return `${status} data`;
  const code = (errors[0] as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return `${status} ${typeof code === "string" ? code : "error without code"}`;
}

/** Adds one to `key` in a tally of outcomes. */
export function bump(tally: Map<string, number>, key: string): void {
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** An attack's own verdict beyond the probes' (whether innocent people could still sign in), with its report lines. */
export interface AttackVerdict {
  meets: boolean;
  lines: string[];
  figures: unknown;
}

/** The report of one phase: each probe's summary, what the attacker got, how long the server took to recover. */
export interface PhaseReport {
  phase: string;
  title: string;
  probes: Record<string, ProbeSummary>;
  /** Attacker outcomes by status or GraphQL error code; empty for the baseline. */
  attacker: Record<string, number>;
  /** Milliseconds after the attack stopped until GET /signin was quick again; undefined for the baseline. */
  settleMs?: number;
  settled?: boolean;
  /** Client addresses the server recorded for the attack's requests (its audit log), when it records them. */
  addressesSeen?: string[];
  /** Audit events the server recorded during the phase, by event and surface ("throttled sign_in_busy"). */
  audited?: Record<string, number>;
  verdict?: AttackVerdict;
  meets: boolean;
}

/** "429 x180, 400 x20": a tally, largest first. */
function formatTally(tally: Record<string, number>): string {
  return Object.entries(tally).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} x${v}`).join(", ");
}

const pad = (text: string, width: number) => text.padStart(width);
const fixed = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "-");

/** The phase as a small text table, one line per probe, then the attacker's tally. */
export function formatPhase(report: PhaseReport): string {
  const lines = [`${report.title}`];
  const header = `  ${"probe".padEnd(22)}${pad("median", 9)}${pad("p99", 9)}${pad("max", 9)}${pad("fail", 6)}${pad(">1s", 5)}${pad("n", 6)}${pad("x base", 10)}  target`;
  lines.push(header);
  // A phase with its own verdict is judged by that alone (Attack.run in stress_attacks.ts).
  const verdictOf = (meets: boolean) => (meets ? "met" : report.verdict ? "missed (not judged)" : "MISSED");
  for (const [name, s] of Object.entries(report.probes)) {
    const ratio = Number.isFinite(s.ratio) ? `${s.ratio.toFixed(2)}x` : "-";
    lines.push(`  ${name.padEnd(22)}${pad(fixed(s.median), 9)}${pad(fixed(s.p99), 9)}${pad(fixed(s.max), 9)}` +
      `${pad(String(s.failures), 6)}${pad(String(s.slow), 5)}${pad(String(s.count), 6)}${pad(ratio, 10)}  ${verdictOf(s.meets)}`);
  }
  for (const [name, s] of Object.entries(report.probes)) {
    if (s.failures > 0) lines.push(`  ${name} failed with: ${formatTally(s.failedWith)}`);
  }
  if (report.phase !== "baseline") lines.push(`  attacker got: ${formatTally(report.attacker) || "nothing back"}`);
  if (report.addressesSeen) lines.push(`  server saw attacker addresses: ${report.addressesSeen.join(", ") || "none recorded"}`);
  if (report.audited) lines.push(`  audited during the phase: ${formatTally(report.audited) || "nothing"}`);
  for (const line of report.verdict?.lines ?? []) lines.push(`  ${line}`);
  if (report.settleMs !== undefined) {
    lines.push(`  recovered ${report.settled ? "after" : "NOT within"} ${(report.settleMs / 1000).toFixed(1)} s once the attack stopped`);
  }
  return lines.join("\n");
}
