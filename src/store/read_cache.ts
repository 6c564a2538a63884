// Read results kept for exactly as long as the database provably has not changed (Db.changeStamp).
import type { Db } from "./sqlite.ts";

/**
 * One moment of the database as this connection saw it, named by its change stamp. A request takes one view when
 * it starts reading (the bearer check) and may then be answered from anything kept under it: what was kept under a
 * view is what the database held at some instant after the view was taken, and nothing committed in between (a
 * later commit makes the next view a new one). So every answer is exact for a moment within the request's own
 * lifetime, as if its reads had run then. Opaque to callers: only the store's caches read it.
 */
export interface ReadView {
  readonly stamp: string;
}

/** The view of now: the same object while the change stamp stays, a new one (with nothing kept) once it moves. */
export function createReadViews(db: Pick<Db, "changeStamp">): () => ReadView {
  let latest: ReadView = Object.freeze({ stamp: "" });
  return () => {
    const stamp = db.changeStamp();
    if (stamp !== latest.stamp) latest = Object.freeze({ stamp });
    return latest;
  };
}

export interface ReadCache<V> {
  /**
   * The value kept for `key` under `view`; otherwise `load()`'s result, which is kept under `view` when it is not
   * undefined. `load` must read synchronously, and `view` must have been taken before it runs (the caller's own
   * view, or a fresh one): then a commit racing with the load only leaves a value no later view will ask for.
   */
  read(view: ReadView, key: string, load: () => V | undefined): V | undefined;
}

/**
 * Values kept per view: a hit returns what the query returned at that view's moment, so a revocation, a disabled
 * user, a removed membership or an import, committed by this process or any other, is seen by the first request
 * whose view is taken after it. Each view holds at most `maxEntries` keys (when full it starts over instead of
 * tracking recency); a view's values go when the last request holding it ends.
 */
export function createReadCache<V>(db: Pick<Db, "inTransaction">, maxEntries: number): ReadCache<V> {
  const kept = new WeakMap<ReadView, Map<string, V>>();
  return {
    read(view, key, load) {
      let entries = kept.get(view);
      const hit = entries?.get(key);
      if (hit !== undefined) return hit;
      const value = load();
      // A value read inside an open transaction may be rolled back, and a rollback moves no stamp: not kept.
      if (value === undefined || db.inTransaction()) return value;
      if (!entries) kept.set(view, (entries = new Map()));
      if (entries.size >= maxEntries) entries.clear();
      entries.set(key, value);
      return value;
    },
  };
}
