// The Throttle over the store's counters: one failure budget for every instance on the database (--workers, or
// several instances on one PostgreSQL), with the rules of http/throttle.ts (limits, shared and uncounted keys).
import type { Throttle, ThrottleKey } from "../deps.ts";
import { isCountedKey, limitOfKey } from "../http/throttle.ts";
import type { CounterKey, ThrottleStore } from "../store/contract.ts";

export interface SharedThrottleOptions {
  /** Names this throttle's counters in the table, apart from another throttle's keys with the same ids. */
  scope: string;
  maxFailures: number;
  windowSeconds: number;
}

/**
 * A Throttle whose counts live in `store`, so a budget spent on one instance is spent on all. Every operation is one
 * atomic store operation; keys no throttle counts (built from the unknown address) never reach the store.
 */
export function createSharedThrottle(store: ThrottleStore, options: SharedThrottleOptions): Throttle {
  const { scope, maxFailures, windowSeconds } = options;
  const prefix = `${scope}:`;
  const counter = (key: ThrottleKey): CounterKey => ({ key: prefix + key.id, limit: limitOfKey(key, maxFailures) });
  const counters = (keys: readonly ThrottleKey[]) => keys.filter(isCountedKey).map(counter);
  const named = (key: ThrottleKey) => (isCountedKey(key) ? counter(key) : undefined);
  const times = (now: number) => ({ now, windowSeconds });
  const release = async (keys: readonly ThrottleKey[], what: { forgive?: boolean; reset?: boolean }) => {
    await store.release(counters(keys).map(({ key }) => ({ key, ...what })));
  };
  return {
    async retryAfter(keys, now) {
      const keyed = counters(keys);
      return keyed.length === 0 ? 0 : await store.retryAfter(keyed, times(now));
    },
    async fail(keys, now) {
      const keyed = counters(keys);
      return keyed.length > 0 && await store.fail(keyed, times(now));
    },
    async charge({ checked, counted }, now) {
      const keys = { checked: counters(checked), counted: counters(counted) };
      if (keys.checked.length === 0 && keys.counted.length === 0) return { wait: 0, lockout: false };
      return await store.charge(keys, times(now));
    },
    forgive: (keys) => release(keys, { forgive: true }),
    reset: (keys) => release(keys, { reset: true }),
    authenticateClient({ clientId, digest, keys, fromMemory }, now) {
      const counted = { registered: named(keys.registered), unknown: named(keys.unknown) };
      return store.authenticateClient({ clientId, digest, keys: counted, fromMemory }, times(now));
    },
    size: () => store.count(prefix),
  };
}
