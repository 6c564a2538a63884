// The throttle counters' rules, over counters as either backend read them under its lock: how a counter stands at a
// time, how long it locks out, and what a charge writes (ThrottleStore.charge).
import type { Charge, CounterKey, CounterRow, CounterTimes } from "./contract.ts";
const NO_COUNTER: CounterRow = { windowEnd: 0, failures: 0 };

/**
 * The counter as it stands at `now`: a window ending more than its length after `now` (the clock went back) ends
 * that length after `now`; failures of an ended window count as none.
 */
export function counterAt(row: CounterRow | undefined, { now, windowSeconds }: CounterTimes): CounterRow {
  const { windowEnd, failures } = row ?? NO_COUNTER;
  const window = Math.min(windowEnd, now + windowSeconds);
  return { windowEnd: window, failures: now < window ? failures : 0 };
}

/** Seconds `counter` (as it stands at `now`) keeps its key locked out; 0 when it is under `limit`. */
export function waitOf(counter: CounterRow, limit: number, now: number): number {
  return counter.failures >= limit ? counter.windowEnd - now : 0;
}

/** The counter after one more failure at `times.now`: in its window, or the first of a new one. */
export function withFailure(row: CounterRow | undefined, times: CounterTimes): CounterRow {
  const counter = counterAt(row, times);
  return times.now < counter.windowEnd
    ? { ...counter, failures: counter.failures + 1 }
    : { failures: 1, windowEnd: times.now + times.windowSeconds };
}

/** What a decision writes: the new counters by key (none when it refused). */
export interface Decided<T> {
  result: T;
  writes: Map<string, CounterRow>;
}

/** The charge rule over the counters read under lock (see ThrottleStore.charge). */
export function decideCharge(
  rows: ReadonlyMap<string, CounterRow>,
  keys: { checked: readonly CounterKey[]; counted: readonly CounterKey[] },
  times: CounterTimes,
): Decided<Charge> {
  const writes = new Map<string, CounterRow>();
  const wait = Math.max(0, ...keys.checked.map(({ key, limit }) => waitOf(counterAt(rows.get(key), times), limit, times.now)));
  if (wait > 0) return { result: { wait, lockout: false }, writes };
  let lockout = false;
  for (const { key, limit } of keys.counted) {
    const row = withFailure(writes.get(key) ?? rows.get(key), times);
    writes.set(key, row);
    if (row.failures === limit) lockout = true;
  }
  return { result: { wait: 0, lockout }, writes };
}
