// Latency statistics for the benchmark: exact percentiles from recorded per-response times.

/** Summary of one scenario's responses; times in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The p-th percentile (0 < p <= 100) of already sorted values by the nearest-rank method: the smallest value
 * such that at least p% of the values are at or below it. NaN for an empty list.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Sorts a copy of the recorded times and summarises them. */
export function summarise(times: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(times).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i]!;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

/** A growable Float64 buffer so recording millions of response times does not allocate per response. */
export function createRecorder(initialCapacity = 65_536) {
  let data = new Float64Array(initialCapacity);
  let length = 0;
  return {
    record(value: number): void {
      if (length === data.length) {
        const next = new Float64Array(data.length * 2);
        next.set(data);
        data = next;
      }
      data[length++] = value;
    },
    values(): Float64Array {
      return data.subarray(0, length);
    },
    get length(): number {
      return length;
    },
  };
}

/** `value` divided by `ceiling`, rounded to two decimals; NaN when the ceiling is unknown or zero. */
export function ratio(value: number, ceiling: number): number {
  if (!(ceiling > 0)) return Number.NaN;
  return Math.round((value / ceiling) * 100) / 100;
}
