// The throttle counters' rules, over counters as either backend read them under its lock: how a counter stands at a
// time, how long it locks out, what a charge writes (ThrottleStore.charge) and how a client check ends
// (ThrottleStore.authenticateClient).
import type { Charge, ClientAttempt, ClientCheck, CounterKey, CounterRow, CounterTimes, TokenClient } from "./contract.ts";
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

/** Compared against when the client_id is unknown, so unknown and known ids take the same time. */
const NO_CLIENT_DIGEST = "0".repeat(64);

/** True when two digests are equal, in a time that depends on their length alone (the stored one's is public). */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The rule of ThrottleStore.authenticateClient over the client's row and the counters as read: refused unchecked
 * while the gate (the client's own key, the address's for an unknown client) is at its limit; otherwise a right
 * secret of an enabled client authenticates and clears the gate's failures, and anything else is a failure counted
 * on the gate and on the address. `counters.gate` is the gate's row as read with the client; `counters.address()`
 * reads the address's, which only a registered client's failure needs.
 */
export function decideClientCheck(
  client: TokenClient | undefined,
  counters: { gate: CounterRow | undefined; address: () => CounterRow | undefined },
  { digest, keys }: ClientAttempt,
  times: CounterTimes,
): Decided<ClientCheck> {
  const writes = new Map<string, CounterRow>();
  const gate = client ? keys.registered : keys.unknown;
  const wait = gate ? waitOf(counterAt(counters.gate, times), gate.limit, times.now) : 0;
  if (wait > 0) return { result: { outcome: "refused", wait, client }, writes };
  const matches = digest !== undefined && sameDigest(digest, client?.secretHash ?? NO_CLIENT_DIGEST);
  if (client && !client.disabled && matches) {
    if (gate && (counters.gate?.failures ?? 0) > 0) writes.set(gate.key, { windowEnd: 0, failures: 0 });
    return { result: { outcome: "authenticated", client }, writes };
  }
  let lockout = false;
  const count = (key: CounterKey | undefined, row: CounterRow | undefined) => {
    if (!key) return;
    const next = withFailure(row, times);
    writes.set(key.key, next);
    if (next.failures === key.limit) lockout = true;
  };
  count(gate, counters.gate);
  if (keys.unknown && gate !== keys.unknown) count(keys.unknown, counters.address());
  return { result: { outcome: "failed", lockout, client }, writes };
}
