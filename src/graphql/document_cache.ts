// A least-recently-used cache keyed by query text, bounded by its entry count and by the characters of its keys.

/**
 * How much a cache may keep. What an entry holds grows with its query text (a parsed document keeps up to ~130 bytes
 * per character, docs/graphql.md "Document cache"), so the characters summed over the keys bound the memory; the
 * entry count only bounds the bookkeeping.
 */
export interface CacheBounds {
  /** Most entries kept. */
  maxEntries: number;
  /** Most characters (UTF-16 code units) of query text kept, summed over the entries. */
  maxChars: number;
  /** Longest query text kept; a longer one is not cached, so one request cannot flush most of the cache. */
  maxEntryChars: number;
}

export interface TextCache<T> {
  /** The value for `text`, marked most recently used; undefined on a miss. */
  get(text: string): T | undefined;
  /** Keeps `value` unless `text` is over the per-entry cap, evicting least recently used entries until it fits. */
  set(text: string, value: T): void;
  /** Entries kept. */
  size(): number;
  /** Characters of query text kept, never more than `maxChars`. */
  chars(): number;
}

/**
 * Builds an empty cache with these bounds.
 * @throws RangeError when the bounds cannot hold a single entry or the per-entry cap exceeds the total
 */
export function createTextCache<T>(bounds: CacheBounds): TextCache<T> {
  const { maxEntries, maxChars, maxEntryChars } = bounds;
  if (!(maxEntries >= 1 && maxEntryChars >= 1 && maxEntryChars <= maxChars)) {
    throw new RangeError("Cache bounds need maxEntries >= 1 and 1 <= maxEntryChars <= maxChars");
  }
  // Map keeps insertion order: the first key is the least recently used.
  const entries = new Map<string, T>();
  let chars = 0;
  const evictOldest = () => {
    const oldest = entries.keys().next().value as string;
    entries.delete(oldest);
    chars -= oldest.length;
  };
  return {
    get(text) {
      const hit = entries.get(text);
      if (hit === undefined) return undefined;
      entries.delete(text);
      entries.set(text, hit);
      return hit;
    },
    set(text, value) {
      if (text.length > maxEntryChars || entries.has(text)) return;
      while (entries.size >= maxEntries || chars + text.length > maxChars) evictOldest();
      entries.set(text, value);
      chars += text.length;
    },
    size: () => entries.size,
    chars: () => chars,
  };
}
