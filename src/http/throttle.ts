// The throttle's keys: the bucket of a caller address, the keys no throttle counts, and the limit of a shared key.
// The counting itself is the store's (app/shared_throttle.ts over store.throttles).
import type { ThrottleKey } from "../deps.ts";

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
 * length so no caller-chosen string grows the throttle's keys.
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
