// throttle_counters table: failures and pending attempts per throttle key, which every instance on one database shares.
import type { Db } from "./sqlite.ts";
import type { TokenClient } from "./clients.ts";

/**
 * Seconds an admitted attempt holds its place without being settled. An instance that dies between admit and
 * settle leaves its attempts counted; they stop counting after this long, so they hold a key back for at most that.
 * Far longer than a check takes (a digest and one lookup, each under the statement timeout).
 */
export const PENDING_LEASE_SECONDS = 30;

/** One counter an operation names: its key and the failures it tolerates per window. */
export interface CounterKey {
  key: string;
  limit: number;
}

/** The time an operation happens at, and how long a window of failures lasts. */
export interface CounterTimes {
  now: number;
  windowSeconds: number;
}

/** What to take back from a key: one failure (forgive), all of them (reset), one pending attempt (settle). */
export interface CounterRelease {
  key: string;
  forgive?: boolean;
  reset?: boolean;
  settle?: boolean;
}

/** Seconds to wait when refused (0: not refused), and whether a failure counted here brought a key to its limit. */
export interface Charge {
  wait: number;
  lockout: boolean;
}

/** An attempt let through, or not: `wait` > 0 when a key is locked out, 0 when pending attempts fill a key. */
export interface Admission {
  admitted: boolean;
  wait: number;
}

/**
 * One client authentication to check and count in one step: the client named `clientId`, the digest of the secret
 * presented (none when none was), and the counter gating it, `registered` when the client exists and `unknown`
 * otherwise (undefined: a key no throttle counts). A failure also counts against `unknown`.
 */
export interface ClientAttempt {
  clientId: string;
  digest: string | undefined;
  keys: { registered: CounterKey | undefined; unknown: CounterKey | undefined };
}

/**
 * How a ClientAttempt ended, with the client row it was checked against: refused unchecked for `wait` seconds (the
 * gate was at its limit), authenticated (the gate's failures forgotten), or failed and counted (`lockout`: that
 * failure brought a key to its limit).
 */
export type ClientCheck =
  & { client: TokenClient | undefined }
  & ({ outcome: "refused"; wait: number } | { outcome: "authenticated" } | { outcome: "failed"; lockout: boolean });

/**
 * Failure counters per key, each operation atomic across every instance using the database. Several entries for one
 * key count as many times. A window whose start lies after `now` (the clock was stepped back) is moved to `now`, so
 * a lockout never lasts longer than one window from the moment it is seen.
 */
export interface ThrottleStore {
  /** Seconds until the last window ends among `keys` at their limit; 0 when none is at its limit. */
  retryAfter(keys: readonly CounterKey[], times: CounterTimes): Promise<number>;
  /** Counts the failures (a key whose window has ended starts a new one at `now`); true when one reached its limit. */
  fail(keys: readonly CounterKey[], times: CounterTimes): Promise<boolean>;
  /**
   * Counts one failure on each of `counted` before the attempt's outcome is known, unless one of `checked` is at its
   * limit: then nothing is counted and `wait` says for how long. One step, so parallel attempts cannot all pass.
   */
  charge(keys: { checked: readonly CounterKey[]; counted: readonly CounterKey[] }, times: CounterTimes): Promise<Charge>;
  /**
   * Counts one pending attempt on every key, all or none, while each key's failures plus pending attempts stay under
   * its limit; refused without counting otherwise.
   */
  admit(keys: readonly CounterKey[], times: CounterTimes): Promise<Admission>;
  /** Takes back what each entry names from keys that have a counter; others are left alone. */
  release(entries: readonly CounterRelease[]): Promise<void>;
  /**
   * Looks up the client, checks the digest against its secret and counts the outcome, as one step under the gate's
   * counter: parallel guesses are checked one after the other, each seeing the failures before it, so no more are
   * checked than the limit allows, and none waits for another's outcome to be released. Only a store whose every
   * operation is a round trip has it (PostgreSQL): it is client authentication in one.
   */
  checkClient?(attempt: ClientAttempt, times: CounterTimes): Promise<ClientCheck>;
  /** Counters whose key starts with `prefix`, whether or not their window has ended. */
  count(prefix: string): Promise<number>;
  /** Deletes the counters whose window and pending lease have both ended by `now`; how many. */
  purgeExpired(now: number): Promise<number>;
}

/** A counter as stored: failures count while `now` < windowEnd, pending attempts while `now` < pendingEnd. */
export interface CounterRow {
  windowEnd: number;
  failures: number;
  pending: number;
  pendingEnd: number;
}

const NO_COUNTER: CounterRow = { windowEnd: 0, failures: 0, pending: 0, pendingEnd: 0 };

/**
 * The counter as it stands at `now`: a window or lease ending more than its length after `now` (the clock went back)
 * ends that length after `now`; failures of an ended window and attempts of an ended lease count as none.
 */
export function counterAt(row: CounterRow | undefined, { now, windowSeconds }: CounterTimes): CounterRow {
  const { windowEnd, failures, pending, pendingEnd } = row ?? NO_COUNTER;
  const window = Math.min(windowEnd, now + windowSeconds);
  const lease = Math.min(pendingEnd, now + PENDING_LEASE_SECONDS);
  return {
    windowEnd: window,
    failures: now < window ? failures : 0,
    pending: now < lease ? pending : 0,
    pendingEnd: lease,
  };
}

/** Seconds `counter` (as it stands at `now`) keeps its key locked out; 0 when it is under `limit`. */
function waitOf(counter: CounterRow, limit: number, now: number): number {
  return counter.failures >= limit ? counter.windowEnd - now : 0;
}

/** The counter after one more failure at `times.now`: in its window, or the first of a new one. */
export function withFailure(row: CounterRow | undefined, times: CounterTimes): CounterRow {
  const counter = counterAt(row, times);
  return times.now < counter.windowEnd
    ? { ...counter, failures: counter.failures + 1 }
    : { ...counter, failures: 1, windowEnd: times.now + times.windowSeconds };
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

/** The admission rule over the counters read under lock (see ThrottleStore.admit). */
export function decideAdmit(rows: ReadonlyMap<string, CounterRow>, keys: readonly CounterKey[], times: CounterTimes): Decided<Admission> {
  const writes = new Map<string, CounterRow>();
  let wait = 0;
  let full = false;
  for (const { key, limit } of keys) {
    const counter = counterAt(writes.get(key) ?? rows.get(key), times);
    wait = Math.max(wait, waitOf(counter, limit, times.now));
    full ||= counter.failures + counter.pending >= limit;
    writes.set(key, { ...counter, pending: counter.pending + 1, pendingEnd: times.now + PENDING_LEASE_SECONDS });
  }
  if (wait > 0 || full) return { result: { admitted: false, wait }, writes: new Map() };
  return { result: { admitted: true, wait: 0 }, writes };
}

const SELECT_ROW = "SELECT window_end, failures, pending, pending_end FROM throttle_counters WHERE key = ?";
const UPSERT_ROW = `INSERT INTO throttle_counters (key, window_end, failures, pending, pending_end) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET window_end = excluded.window_end, failures = excluded.failures,
    pending = excluded.pending, pending_end = excluded.pending_end`;

/** The SQLite counters: each operation reads and writes inside one write transaction, the group commit's. */
export function createThrottleStore(db: Db): ThrottleStore {
  const read = (key: string): CounterRow | undefined => {
    const row = db.prepare(SELECT_ROW).get(key);
    if (row === undefined) return undefined;
    return {
      windowEnd: Number(row.window_end),
      failures: Number(row.failures),
      pending: Number(row.pending),
      pendingEnd: Number(row.pending_end),
    };
  };
  const readAll = (keys: readonly CounterKey[]) => new Map(keys.flatMap(({ key }) => {
    const row = read(key);
    return row ? [[key, row] as const] : [];
  }));
  const write = (writes: ReadonlyMap<string, CounterRow>) => {
    for (const [key, row] of writes) {
      db.prepare(UPSERT_ROW).run(key, row.windowEnd, row.failures, row.pending, row.pendingEnd);
    }
  };
  /** Runs a decision on the counters as committed, inside the write transaction that stores its outcome. */
  const decided = <T>(keys: readonly CounterKey[], decide: (rows: Map<string, CounterRow>) => Decided<T>) =>
    db.transactionBatched(() => {
      const { result, writes } = decide(readAll(keys));
      write(writes);
      return result;
    });

  return {
    async retryAfter(keys, times) {
      const rows = db.readTogether(() => readAll(keys));
      let wait = 0;
      const moved = new Map<string, CounterRow>();
      for (const { key, limit } of keys) {
        const row = rows.get(key);
        if (!row) continue;
        const counter = counterAt(row, times);
        if (counter.windowEnd !== row.windowEnd) moved.set(key, { ...row, windowEnd: counter.windowEnd });
        wait = Math.max(wait, waitOf(counter, limit, times.now));
      }
      // The window moved back with the clock is stored, so it keeps ending one window after it was first seen.
      if (moved.size > 0) await db.transactionBatched(() => write(moved));
      return wait;
    },
    async fail(keys, times) {
      if (keys.length === 0) return false;
      return await db.transactionBatched(() => {
        let lockout = false;
        for (const { key, limit } of keys) {
          const row = withFailure(read(key), times);
          write(new Map([[key, row]]));
          if (row.failures === limit) lockout = true;
        }
        return lockout;
      });
    },
    charge(keys, times) {
      return decided([...keys.checked, ...keys.counted], (rows) => decideCharge(rows, keys, times));
    },
    admit(keys, times) {
      return decided(keys, (rows) => decideAdmit(rows, keys, times));
    },
    async release(entries) {
      if (entries.length === 0) return;
      await db.transactionBatched(() => {
        for (const { key, forgive, reset, settle } of entries) {
          db.prepare(`UPDATE throttle_counters SET
              failures = CASE WHEN ?2 THEN 0 WHEN ?3 THEN MAX(failures - 1, 0) ELSE failures END,
              window_end = CASE WHEN ?2 THEN 0 ELSE window_end END,
              pending = CASE WHEN ?4 THEN MAX(pending - 1, 0) ELSE pending END
            WHERE key = ?1`).run(key, reset ? 1 : 0, forgive ? 1 : 0, settle ? 1 : 0);
        }
      });
    },
    async count(prefix) {
      const row = db.prepare("SELECT COUNT(*) AS n FROM throttle_counters WHERE substr(key, 1, length(?1)) = ?1").get(prefix);
      return Number(row?.n ?? 0);
    },
    purgeExpired(now) {
      return db.transactionBatched(() =>
        Number(db.prepare("DELETE FROM throttle_counters WHERE window_end <= ?1 AND pending_end <= ?1").run(now).changes)
      );
    },
  };
}
