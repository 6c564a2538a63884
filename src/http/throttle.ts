// Failure throttling: counts failed attempts per key in a fixed window and refuses further attempts for a while.

export interface Throttle {
  /** Seconds to wait before any of `keys` may try again; 0 when all are allowed. */
  retryAfter(keys: readonly string[], now: number): number;
  /** Records one failure against every key. */
  fail(keys: readonly string[], now: number): void;
  /** Forgets the failures of these keys (after a success). */
  reset(keys: readonly string[]): void;
  /** How many keys are tracked; for tests and metrics. */
  size(): number;
}

interface Entry {
  windowStart: number;
  failures: number;
}

/**
 * An in-memory throttle: at most `maxFailures` failures per key per `windowSeconds`; the key is then refused
 * until its window ends. Memory is bounded: entries whose window has passed are swept once the map grows.
 * Per process: with --workers N each process throttles on its own, so the effective limit is N times higher.
 */
export function createThrottle(options: { maxFailures: number; windowSeconds: number; maxKeys?: number }): Throttle {
  const entries = new Map<string, Entry>();
  const maxKeys = options.maxKeys ?? 100_000;

  function sweep(now: number): void {
    for (const [key, entry] of entries) {
      if (now - entry.windowStart >= options.windowSeconds) entries.delete(key);
    }
    // Still full of live entries (a flood of distinct keys): drop the oldest rather than grow without bound.
    while (entries.size >= maxKeys) entries.delete(entries.keys().next().value as string);
  }

  return {
    retryAfter(keys, now) {
      let wait = 0;
      for (const key of keys) {
        const entry = entries.get(key);
        if (!entry || entry.failures < options.maxFailures) continue;
        const remaining = entry.windowStart + options.windowSeconds - now;
        if (remaining > 0) wait = Math.max(wait, remaining);
      }
      return wait;
    },
    fail(keys, now) {
      for (const key of keys) {
        const entry = entries.get(key);
        if (entry && now - entry.windowStart < options.windowSeconds) {
          entry.failures++;
        } else {
          if (!entry && entries.size >= maxKeys) sweep(now);
          entries.set(key, { windowStart: now, failures: 1 });
        }
      }
    },
    reset(keys) {
      for (const key of keys) entries.delete(key);
    },
    size: () => entries.size,
  };
}
