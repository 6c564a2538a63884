// Read results kept for exactly as long as the database provably has not changed (Db.changeStamp).
import type { Db } from "./database.ts";

/**
 * One moment of the database as this connection saw it, named by its change stamp. A request takes one view when
 * it starts reading (the bearer check) and may then be answered from anything kept under it: only what the database
 * held at that very moment is kept under a view (a later commit makes the next view a new one). So each value a
 * request gets is exact for a moment within its own lifetime. Opaque to callers: only the store's caches read it.
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
   * undefined and is still the view's moment. `load` must read synchronously.
   */
  read(view: ReadView, key: string, load: () => V | undefined): V | undefined;
}

export interface ReadCacheLimits {
  /** Keys one view holds at most; when full it starts over instead of tracking recency. */
  maxEntries: number;
  /** Longer keys are never kept: keys carry what a client chose (a filter's text), and they stay in memory. */
  maxKeyLength: number;
}

/**
 * Values kept per view: a hit returns what the query returned at that view's moment, so a revocation, a disabled
 * user, a removed membership or an import, committed by this process or any other, is seen by the first request
 * whose view is taken after it. A view's values go when the last request holding it ends.
 */
export function createReadCache<V>(db: Pick<Db, "changeStamp" | "inTransaction">, limits: ReadCacheLimits): ReadCache<V> {
  const kept = new WeakMap<ReadView, Map<string, V>>();
  return {
    read(view, key, load) {
      let entries = kept.get(view);
      const hit = entries?.get(key);
      if (hit !== undefined) return hit;
      const value = load();
      if (value === undefined || key.length > limits.maxKeyLength) return value;
      // Kept only as the view's moment. Not read inside an open transaction: a rollback moves no stamp. And
      // nothing committed since the view was taken: stamps only move forward, so the same stamp after the load
      // means none in between; otherwise a request holding the view would get a later moment for this key than
      // for the keys kept before, and one response could hold two counts no moment of the database had.
      if (db.inTransaction() || db.changeStamp() !== view.stamp) return value;
      if (!entries) kept.set(view, (entries = new Map()));
      if (entries.size >= limits.maxEntries) entries.clear();
      entries.set(key, value);
      return value;
    },
  };
}
