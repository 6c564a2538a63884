// The Throttle over the store's counters: one failure budget for every instance on the database (--workers, or
// several instances on one PostgreSQL), with the same rules as the in-memory one (http/throttle.ts).
import type { Throttle, ThrottleKey } from "../deps.ts";
import { isCountedKey, limitOfKey } from "../http/throttle.ts";
import { type CounterKey, type CounterRelease, PENDING_LEASE_SECONDS, type ThrottleStore } from "../store/throttles.ts";

/** First pause before an attempt waiting for a place looks again, doubled up to POLL_MAX_MS. */
const POLL_FIRST_MS = 2;
const POLL_MAX_MS = 50;
/**
 * How long an attempt waits for a place by default. Places free within milliseconds (a digest and one lookup); this
 * long means the attempts holding them are stuck, or their instance died and their lease has yet to end, so the
 * attempt is refused for that lease rather than holding its request open.
 */
const WAIT_LIMIT_MS = 5_000;

export interface SharedThrottleOptions {
  /** Names this throttle's counters in the table, apart from another throttle's keys with the same ids. */
  scope: string;
  maxFailures: number;
  windowSeconds: number;
  /** Milliseconds an attempt waits for a place before it is refused (default WAIT_LIMIT_MS). */
  waitLimitMs?: number;
}

/**
 * A Throttle whose counts live in `store`, so a budget spent on one instance is spent on all. An attempt admitted
 * here is pending in the store until settled. One waiting for a place looks again after a short pause, or as soon
 * as an attempt of this instance settles on its key: each settle wakes the longest waiting attempt there, which takes
 * the place freed or, finding the key locked by that attempt's failure, answers so; the others look at their next
 * pause's end, as they do for attempts of other instances.
 */
export function createSharedThrottle(store: ThrottleStore, options: SharedThrottleOptions): Throttle {
  const { scope, maxFailures, windowSeconds } = options;
  const prefix = `${scope}:`;
  const counter = (key: ThrottleKey): CounterKey => ({ key: prefix + key.id, limit: limitOfKey(key, maxFailures) });
  const counters = (keys: readonly ThrottleKey[]) => keys.filter(isCountedKey).map(counter);
  const times = (now: number) => ({ now, windowSeconds });
  const release = (keys: readonly ThrottleKey[], what: Omit<CounterRelease, "key">) =>
    store.release(counters(keys).map(({ key }) => ({ key, ...what })));
  // This instance's waiting attempts by counter key, longest waiting first; each ends its pause when called.
  const waiting = new Map<string, Set<() => void>>();

  function pause(keys: readonly CounterKey[], ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const { key } of keys) {
          const set = waiting.get(key);
          set?.delete(done);
          if (set?.size === 0) waiting.delete(key);
        }
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const { key } of keys) waiting.set(key, (waiting.get(key) ?? new Set()).add(done));
    });
  }

  /** Wakes the longest waiting attempt on each of `keys`: a place there was freed, or a failure may have locked it. */
  function wake(keys: readonly CounterKey[]): void {
    for (const { key } of keys) waiting.get(key)?.values().next().value?.();
  }

  const checkClient = store.checkClient;
  return {
    ...(checkClient && {
      checkClient: ({ clientId, digest, keys }, now) => {
        const named = (key: ThrottleKey) => (isCountedKey(key) ? counter(key) : undefined);
        return checkClient({ clientId, digest, keys: { registered: named(keys.registered), unknown: named(keys.unknown) } }, times(now));
      },
    }),
    async retryAfter(keys, now) {
      const named = counters(keys);
      return named.length === 0 ? 0 : await store.retryAfter(named, times(now));
    },
    async fail(keys, now) {
      const named = counters(keys);
      return named.length > 0 && await store.fail(named, times(now));
    },
    async charge({ checked, counted }, now) {
      const keys = { checked: counters(checked), counted: counters(counted) };
      if (keys.checked.length === 0 && keys.counted.length === 0) return { wait: 0, lockout: false };
      return await store.charge(keys, times(now));
    },
    async forgive(keys) {
      await release(keys, { forgive: true });
    },
    async reset(keys) {
      await release(keys, { reset: true });
    },
    async admit(keys, now) {
      const named = counters(keys);
      if (named.length === 0) return 0;
      const deadline = performance.now() + (options.waitLimitMs ?? WAIT_LIMIT_MS);
      for (let ms = POLL_FIRST_MS;; ms = Math.min(ms * 2, POLL_MAX_MS)) {
        const { admitted, wait } = await store.admit(named, times(now));
        if (wait > 0) return wait;
        if (admitted) return 0;
        if (performance.now() >= deadline) return PENDING_LEASE_SECONDS;
        await pause(named, ms);
      }
    },
    async settle(keys, success) {
      const gate = counters(keys);
      const releases: CounterRelease[] = gate.map(({ key }) => ({ key, settle: true }));
      if (success) releases.push(...counters(success.reset).map(({ key }) => ({ key, reset: true })));
      try {
        if (releases.length > 0) await store.release(releases);
      } finally {
        wake(gate);
      }
    },
    size: () => store.count(prefix),
  };
}
