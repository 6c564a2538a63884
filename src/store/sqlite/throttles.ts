// throttle_counters table: failures per throttle key, which every instance on one database shares.
import type { Db } from "./database.ts";
import type { CounterKey, CounterRow, ThrottleStore } from "../contract.ts";
import { toCounterRow } from "../rows.ts";
import { counterAt, decideCharge, waitOf, withFailure } from "../throttle_rules.ts";

const SELECT_ROW = "SELECT window_end, failures FROM throttle_counters WHERE key = ?";
const UPSERT_ROW = `INSERT INTO throttle_counters (key, window_end, failures, pending, pending_end) VALUES (?, ?, ?, 0, 0)
  ON CONFLICT (key) DO UPDATE SET window_end = excluded.window_end, failures = excluded.failures`;

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
 * authenticateClient is client_authentication.ts, which store.ts adds.
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
    rememberProof(keyHash, expiresAt) {
      return db.transactionBatched(() =>
        db.prepare("INSERT INTO dpop_proofs (key_hash, expires_at) VALUES (?, ?) ON CONFLICT (key_hash) DO NOTHING")
          .run(keyHash, expiresAt).changes === 1
      );
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
