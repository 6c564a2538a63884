// throttle_counters table: failures per throttle key, which every instance on one database shares.
import type { Db, MappedRow } from "./database.ts";
import type { TokenClient } from "./clients.ts";

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

/** What to take back from a key: one failure (forgive) or all of them (reset). */
export interface CounterRelease {
  key: string;
  forgive?: boolean;
  reset?: boolean;
}

/** Seconds to wait when refused (0: not refused), and whether a failure counted here brought a key to its limit. */
export interface Charge {
  wait: number;
  lockout: boolean;
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
  | { outcome: "refused"; wait: number; client: TokenClient | undefined }
  | { outcome: "authenticated"; client: TokenClient }
  | { outcome: "failed"; lockout: boolean; client: TokenClient | undefined };

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
  /** Takes back what each entry names from keys that have a counter; others are left alone. */
  release(entries: readonly CounterRelease[]): Promise<void>;
  /**
   * Client authentication: looks up the client, checks the digest against its secret (in constant time; a disabled
   * client fails like a wrong secret) and counts the outcome, as one step under the gate's counter. Parallel guesses,
   * from any number of instances, are checked one after the other, each seeing the failures before it, so no more
   * are checked than the limit allows, and none waits for another.
   */
  authenticateClient(attempt: ClientAttempt, times: CounterTimes): Promise<ClientCheck>;
  /** Counters whose key starts with `prefix`, whether or not their window has ended. */
  count(prefix: string): Promise<number>;
  /** Deletes the counters whose window has ended by `now`; how many. */
  purgeExpired(now: number): Promise<number>;
}

/** A counter as stored: its failures count while `now` < windowEnd. */
export interface CounterRow {
  windowEnd: number;
  failures: number;
}

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

const SELECT_ROW = "SELECT window_end, failures FROM throttle_counters WHERE key = ?";
const UPSERT_ROW = `INSERT INTO throttle_counters (key, window_end, failures, pending, pending_end) VALUES (?, ?, ?, 0, 0)
  ON CONFLICT (key) DO UPDATE SET window_end = excluded.window_end, failures = excluded.failures`;

/** A throttle_counters row (either backend's) as a CounterRow. */
export function toCounterRow(row: MappedRow): CounterRow {
  return { windowEnd: Number(row.window_end), failures: Number(row.failures) };
}

/** Reads and writes SQLite's counters; every call runs inside the caller's transaction or as one statement. */
export interface SqliteCounters {
  read(key: string): CounterRow | undefined;
  readAll(keys: readonly CounterKey[]): Map<string, CounterRow>;
  write(writes: ReadonlyMap<string, CounterRow>): void;
}

/** SQLite's counter statements over `db`. */
export function sqliteCounters(db: Db): SqliteCounters {
  const read = (key: string): CounterRow | undefined => {
    const row = db.prepare(SELECT_ROW).get(key);
    return row === undefined ? undefined : toCounterRow(row);
  };
  return {
    read,
    readAll: (keys) => new Map(keys.flatMap(({ key }) => {
      const row = read(key);
      return row ? [[key, row] as const] : [];
    })),
    write(writes) {
      for (const [key, row] of writes) db.prepare(UPSERT_ROW).run(key, row.windowEnd, row.failures);
    },
  };
}

/**
 * The SQLite counters: each operation reads and writes inside one write transaction, the group commit's.
 * authenticateClient is store/client_authentication.ts, which store.ts adds.
 */
export function createThrottleStore(db: Db): Omit<ThrottleStore, "authenticateClient"> {
  const { read, readAll, write } = sqliteCounters(db);
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
      return db.transactionBatched(() => {
        const { result, writes } = decideCharge(readAll([...keys.checked, ...keys.counted]), keys, times);
        write(writes);
        return result;
      });
    },
    async release(entries) {
      if (entries.length === 0) return;
      await db.transactionBatched(() => {
        for (const { key, forgive, reset } of entries) {
          db.prepare(`UPDATE throttle_counters SET
              failures = CASE WHEN ?2 THEN 0 WHEN ?3 THEN MAX(failures - 1, 0) ELSE failures END,
              window_end = CASE WHEN ?2 THEN 0 ELSE window_end END
            WHERE key = ?1`).run(key, reset ? 1 : 0, forgive ? 1 : 0);
        }
      });
    },
    async count(prefix) {
      const row = db.prepare("SELECT COUNT(*) AS n FROM throttle_counters WHERE substr(key, 1, length(?1)) = ?1").get(prefix);
      return Number(row?.n ?? 0);
    },
    purgeExpired(now) {
      // pending_end: attempts an earlier version counted as pending hold their row until their lease ended.
      return db.transactionBatched(() =>
        Number(db.prepare("DELETE FROM throttle_counters WHERE window_end <= ?1 AND pending_end <= ?1").run(now).changes)
      );
    },
  };
}
