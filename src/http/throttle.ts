// Failure throttling: counts failed attempts per key in a fixed window and refuses further attempts for a while.

/** One counter the throttle keeps, e.g. "client:<id>|ip:<addr>". */
export interface ThrottleKey {
  id: string;
  /**
   * True for a key that many honest callers may share, such as a bare address (NAT, a proxy without
   * FIELDGATE_TRUST_PROXY). It tolerates SHARED_KEY_FACTOR times more failures, so one misconfigured client
   * does not lock its neighbours out while a real flood from that address is still stopped.
   */
  shared?: boolean;
}

/** How many times more failures a shared key tolerates than a specific one. */
export const SHARED_KEY_FACTOR = 10;

export interface Throttle {
  /** Seconds to wait before any of `keys` may try again; 0 when all are allowed. */
  retryAfter(keys: readonly ThrottleKey[], now: number): number;
  /** Records one failure against every key. */
  fail(keys: readonly ThrottleKey[], now: number): void;
  /** Forgets the failures of these keys (after a success). */
  reset(keys: readonly ThrottleKey[]): void;
  /** How many keys are tracked; for tests and metrics. */
  size(): number;
}

interface Entry {
  windowStart: number;
  failures: number;
}

/**
 * An in-memory throttle: at most `maxFailures` failures per key per `windowSeconds` (SHARED_KEY_FACTOR times that
 * for shared keys); the key is then refused
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
        const entry = entries.get(key.id);
        const limit = key.shared ? options.maxFailures * SHARED_KEY_FACTOR : options.maxFailures;
        if (!entry || entry.failures < limit) continue;
        const remaining = entry.windowStart + options.windowSeconds - now;
        if (remaining > 0) wait = Math.max(wait, remaining);
      }
      return wait;
    },
    fail(keys, now) {
      for (const { id } of keys) {
        const entry = entries.get(id);
        if (entry && now - entry.windowStart < options.windowSeconds) {
          entry.failures++;
        } else {
          if (!entry && entries.size >= maxKeys) sweep(now);
          entries.set(id, { windowStart: now, failures: 1 });
        }
      }
    },
    reset(keys) {
      for (const { id } of keys) entries.delete(id);
    },
    size: () => entries.size,
  };
}
