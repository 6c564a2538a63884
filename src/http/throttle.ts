// Failure throttling: counts failed attempts per key in a fixed window and refuses further attempts for a while.
import type { Throttle, ThrottleKey } from "../deps.ts";

/** How many times more failures a shared key tolerates than a specific one. */
export const SHARED_KEY_FACTOR = 10;

/** The client address when the caller's is not known (an embedder's app.fetch call without a remote address). */
export const UNKNOWN_ADDRESS = "unknown";

/**
 * The bucket of UNKNOWN_ADDRESS. Keys built from it are not counted: every caller would share them, so one caller's
 * failures would lock every other out (and a per-client key would become the global per-client lock the throttle
 * deliberately avoids). Keys without an address, such as a username's, still count.
 */
const UNKNOWN_BUCKET = "(unknown)";

/** False for a key built from the unknown address, which no throttle counts (see UNKNOWN_BUCKET). */
export const isCountedKey = (key: ThrottleKey) => !key.id.endsWith(UNKNOWN_BUCKET);

/** The failures `key` tolerates per window: `maxFailures`, SHARED_KEY_FACTOR times that for a shared key. */
export const limitOfKey = (key: ThrottleKey, maxFailures: number) => (key.shared ? maxFailures * SHARED_KEY_FACTOR : maxFailures);

interface Entry {
  windowStart: number;
  failures: number;
}

/**
 * An in-memory throttle: at most `maxFailures` failures per key per `windowSeconds` (SHARED_KEY_FACTOR times that
 * for shared keys); the key is then refused
 * until its window ends. Memory is bounded: entries whose window has passed are swept once the map grows.
 * Per process: the app uses it when it is the only instance on its database (app/shared_throttle.ts otherwise).
 * Every operation completes before its promise is returned, so each is atomic with respect to the others.
 */
export function createThrottle(options: { maxFailures: number; windowSeconds: number; maxKeys?: number }): Throttle {
  const entries = new Map<string, Entry>();
  // Attempts admitted and not yet settled, per key id; an id leaves the map when its last one settles.
  const pending = new Map<string, number>();
  let waiting: (() => void)[] = [];
  const maxKeys = options.maxKeys ?? 100_000;
  const counted = isCountedKey;

  function sweep(now: number): void {
    for (const [key, entry] of entries) {
      if (now - entry.windowStart >= options.windowSeconds) entries.delete(key);
    }
    // Still full of live entries (a flood of distinct keys): drop the oldest rather than grow without bound.
    while (entries.size >= maxKeys) entries.delete(entries.keys().next().value as string);
  }

  const limitOf = (key: ThrottleKey) => limitOfKey(key, options.maxFailures);

  /**
   * The entry for `id`, its window moved to `now` if the clock went back past its start: windows are wall-clock
   * times (the injected clock), and a clock stepped back two hours would otherwise lock a client out for two hours
   * and a window. A lockout never lasts longer than one window from the moment it is seen.
   */
  function entryAt(id: string, now: number): Entry | undefined {
    const entry = entries.get(id);
    if (entry && now < entry.windowStart) entry.windowStart = now;
    return entry;
  }

  /** Failures of `key` inside its current window. */
  function failuresOf(key: ThrottleKey, now: number): number {
    const entry = entryAt(key.id, now);
    return entry && now - entry.windowStart < options.windowSeconds ? entry.failures : 0;
  }

  const mayStart = (key: ThrottleKey, now: number) =>
    !counted(key) || failuresOf(key, now) + (pending.get(key.id) ?? 0) < limitOf(key);

  function retryAfter(keys: readonly ThrottleKey[], now: number): number {
    let wait = 0;
    for (const key of keys) {
      if (!counted(key)) continue;
      const entry = entryAt(key.id, now);
      if (!entry || entry.failures < limitOf(key)) continue;
      const remaining = entry.windowStart + options.windowSeconds - now;
      if (remaining > 0) wait = Math.max(wait, remaining);
    }
    return wait;
  }

  function fail(keys: readonly ThrottleKey[], now: number): boolean {
    let lockout = false;
    for (const key of keys) {
      if (!counted(key)) continue;
      let entry = entryAt(key.id, now);
      if (entry && now - entry.windowStart < options.windowSeconds) {
        entry.failures++;
      } else {
        if (!entry && entries.size >= maxKeys) sweep(now);
        entry = { windowStart: now, failures: 1 };
        entries.set(key.id, entry);
      }
      if (entry.failures === limitOf(key)) lockout = true;
    }
    return lockout;
  }

  function reset(keys: readonly ThrottleKey[]): void {
    for (const { id } of keys) entries.delete(id);
  }

  const throttle: Throttle = {
    async retryAfter(keys, now) {
      return retryAfter(keys, now);
    },
    async fail(keys, now) {
      return fail(keys, now);
    },
    async charge({ checked, counted }, now) {
      const wait = retryAfter(checked, now);
      return wait > 0 ? { wait, lockout: false } : { wait: 0, lockout: fail(counted, now) };
    },
    async forgive(keys) {
      for (const { id } of keys) {
        const entry = entries.get(id);
        if (entry && entry.failures > 0) entry.failures--;
      }
    },
    async reset(keys) {
      reset(keys);
    },
    async admit(keys, now) {
      for (;;) {
        const wait = retryAfter(keys, now);
        if (wait > 0) return wait;
        if (keys.every((key) => mayStart(key, now))) break;
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      for (const key of keys) {
        if (counted(key)) pending.set(key.id, (pending.get(key.id) ?? 0) + 1);
      }
      return 0;
    },
    async settle(keys, success) {
      if (success) reset(success.reset);
      for (const key of keys) {
        if (!counted(key)) continue;
        const left = (pending.get(key.id) ?? 0) - 1;
        if (left > 0) pending.set(key.id, left);
        else pending.delete(key.id);
      }
      // Every waiter looks again; those still over a limit wait for the next settle.
      const woken = waiting;
      waiting = [];
      for (const wake of woken) wake();
    },
    size: async () => entries.size,
  };
  return throttle;
}

/** The longest textual IP address we accept (an IPv6 address with an embedded IPv4 tail is at most 45). */
const MAX_ADDRESS_LENGTH = 45;

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/** The four octets of a dotted-quad IPv4 address (no leading zeros, RFC 6943 §3.1.1), else undefined. */
function ipv4Octets(text: string): number[] | undefined {
  return IPV4.test(text) ? text.split(".").map(Number) : undefined;
}

/** The 16-bit groups of one side of an IPv6 address; `v4Tail` allows a dotted-quad last piece (RFC 4291 §2.2). */
function hexGroups(text: string, v4Tail: boolean): number[] | undefined {
  if (text === "") return [];
  const pieces = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const octets = v4Tail && i === pieces.length - 1 ? ipv4Octets(piece) : undefined;
    if (octets) groups.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
    else if (HEX_GROUP.test(piece)) groups.push(parseInt(piece, 16));
    else return undefined;
  }
  return groups;
}

/** The eight 16-bit groups of an IPv6 address in RFC 4291 §2.2 text form (no zone id), else undefined. */
function ipv6Groups(text: string): number[] | undefined {
  if (text.length > MAX_ADDRESS_LENGTH) return undefined;
  const gap = text.indexOf("::");
  if (gap < 0) {
    const groups = hexGroups(text, true);
    return groups?.length === 8 ? groups : undefined;
  }
  if (text.includes("::", gap + 1)) return undefined;
  const head = hexGroups(text.slice(0, gap), false);
  const tail = hexGroups(text.slice(gap + 2), true);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** True when `text` is exactly one IPv4 or IPv6 address, nothing around it. */
export function isIpAddress(text: string): boolean {
  return text.length <= MAX_ADDRESS_LENGTH && (IPV4.test(text) || ipv6Groups(text) !== undefined);
}

/**
 * The throttle bucket of a client address: an IPv6 address becomes its /64 prefix, because one subscriber
 * usually holds a whole /64 (RFC 6177 §2) and could otherwise rotate through 2^64 fresh keys; an IPv4-mapped
 * IPv6 address (::ffff:a.b.c.d) becomes its IPv4 address; IPv4 stays as it is. Anything else is cut to a bounded
 * length so no caller-chosen string grows the throttle map's keys.
 */
export function addressBucket(ip: string): string {
  if (IPV4.test(ip)) return ip;
  if (ip === UNKNOWN_ADDRESS) return UNKNOWN_BUCKET;
  const groups = ipv6Groups(ip);
  if (!groups) return ip.slice(0, MAX_ADDRESS_LENGTH);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}
