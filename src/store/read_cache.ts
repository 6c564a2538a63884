// Read results kept for exactly as long as the database provably has not changed (Db.changeStamp).
import type { Db } from "./sqlite.ts";

export interface ReadCache<V> {
  /**
   * The value stored for `key` if nothing was written to the database since it was loaded; otherwise `load()`'s
   * result, which is kept when it is not undefined. `load` must read synchronously: the stamp it is kept under is
   * taken before it runs, so a commit racing with the load only makes the next read load again.
   */
  read(key: string, load: () => V | undefined): V | undefined;
}

/**
 * A cache that empties itself whenever the change stamp moves, so a hit returns what the query would return now:
 * a revocation, a disabled user or a removed membership, committed by this process or any other, is seen by the
 * very next read. Bounded by `maxEntries`: when full it starts over instead of tracking recency.
 */
export function createReadCache<V>(db: Pick<Db, "changeStamp" | "inTransaction">, maxEntries: number): ReadCache<V> {
  const entries = new Map<string, V>();
  let stamp = "";
  return {
    read(key, load) {
      const now = db.changeStamp();
      if (now !== stamp) {
        entries.clear();
        stamp = now;
      }
      const hit = entries.get(key);
      if (hit !== undefined) return hit;
      const value = load();
      // A value read inside an open transaction may be rolled back, and a rollback moves no stamp: not kept.
      if (value !== undefined && !db.inTransaction()) {
        if (entries.size >= maxEntries) entries.clear();
        entries.set(key, value);
      }
      return value;
    },
  };
}
