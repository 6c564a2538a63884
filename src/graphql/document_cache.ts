// A least-recently-used cache keyed by query text, bounded by its entry count and by the characters its entries weigh.

/**
 * How much a cache may keep. What an entry holds grows with its query text (a parsed document keeps up to ~130 bytes
 * per character, docs/architecture.md#performance-devices), so the characters summed over the keys bound the memory; the
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
  /**
   * Keeps `value` unless its weight (the characters of text it holds, `text.length` by default) is over the
   * per-entry cap, evicting least recently used entries until it fits.
   */
  set(text: string, value: T, weight?: number): void;
  /** Entries kept. */
  size(): number;
  /** Characters of query text kept (summed weights), never more than `maxChars`. */
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
  const entries = new Map<string, { value: T; weight: number }>();
  let chars = 0;
  const evictOldest = () => {
    const [oldest, entry] = entries.entries().next().value!;
    entries.delete(oldest);
    chars -= entry.weight;
  };
  return {
    get(text) {
      const hit = entries.get(text);
      if (hit === undefined) return undefined;
      entries.delete(text);
      entries.set(text, hit);
      return hit.value;
    },
    set(text, value, weight = text.length) {
      if (weight > maxEntryChars || entries.has(text)) return;
      while (entries.size >= maxEntries || chars + weight > maxChars) evictOldest();
      entries.set(text, { value, weight });
      chars += weight;
    },
    size: () => entries.size,
    chars: () => chars,
  };
}
