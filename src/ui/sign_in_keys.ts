// The throttle keys of a sign-in attempt: which counters it is checked against, counts against, resets and forgives.
import type { Deps, ThrottleKey } from "../deps.ts";
import { addressBucket } from "../http/throttle.ts";
import { recognizedDevice } from "./device.ts";

/** The throttle keys of one sign-in attempt, by what each step does with them. */
export interface SignInKeys {
  /** Keys that must not be locked out for the attempt to go ahead. */
  checked: ThrottleKey[];
  /** Keys the attempt counts against, before its password is checked. */
  counted: ThrottleKey[];
  /** Keys a success resets: this username from this address, and this device. */
  own: ThrottleKey[];
  /** Shared keys a success only takes its own attempt back from. */
  shared: ThrottleKey[];
  /** The address bucket's key, the one a busy refusal counts against. */
  address: ThrottleKey;
}

const deviceKey = (device: string): ThrottleKey => ({ id: `signin:device:${device}` });

/**
 * Throttle keys of a sign-in attempt: the username from this address (the tight limit), the username from anywhere
 * and the address (both shared, SHARED_KEY_FACTOR times the limit). A username key alone would let anyone lock a
 * person out of signing in with a few wrong passwords a minute; keyed with the address, an attacker locks out only
 * themselves, while the username's shared key still caps a guessing attack spread over many addresses. That shared
 * key would still let guesses from a few dozen addresses lock the person out everywhere, so a browser that signed in
 * as this user before (`device`, see exemptDevice) is not held back by it: it has a key of its own instead, with the
 * tight limit, and its failures still count against the username. The address is its bucket (an IPv6 /64) so
 * rotating through one's own /64 finds no fresh key. An implausible username gets no key of its own: a key embedding
 * a 60 KB name would cost that much memory, so such attempts count against the address only.
 */
export function throttleKeys(username: string | undefined, clientIp: string, device: string | undefined): SignInKeys {
  const bucket = addressBucket(clientIp);
  const address = { id: `signin:ip:${bucket}`, shared: true };
  if (username === undefined) return { checked: [address], counted: [address], own: [], shared: [address], address };
  const name = username.toLowerCase();
  const own = [{ id: `signin:user:${name}|ip:${bucket}` }, ...(device === undefined ? [] : [deviceKey(device)])];
  const everywhere = { id: `signin:user:${name}`, shared: true };
  const checked = device === undefined ? [...own, everywhere, address] : [...own, address];
  return { checked, counted: [...own, everywhere, address], own, shared: [everywhere, address], address };
}

/**
 * Keys of the successful sign-in limit: the username from anywhere, since a signed-in session and an audit row are
 * what each success costs wherever it comes from, and the address, shared (SHARED_KEY_FACTOR times the limit) as for
 * failures because a whole office may sign in from one.
 */
export function successKeys(username: string, clientIp: string): ThrottleKey[] {
  return [{ id: `signin-ok:user:${username.toLowerCase()}` }, { id: `signin-ok:ip:${addressBucket(clientIp)}`, shared: true }];
}

/**
 * The device that exempts this attempt from the username-wide key: the browser's device cookie for this username
 * (device.ts), while that device is under its own failure limit. Past it the cookie exempts nothing for the rest of
 * the window, so a stolen device cookie buys a guesser no more than the address keys would.
 */
export async function exemptDevice(deps: Deps, request: Request, username: string, now: number): Promise<string | undefined> {
  const device = username ? await recognizedDevice(deps, request, username) : undefined;
  return device !== undefined && await deps.throttle.retryAfter([deviceKey(device)], now) === 0 ? device : undefined;
}
