// The sign-in device cookie: a browser's signed proof that it signed in as a user before, which exempts it from the
// username-wide sign-in lock (OWASP, "Slow Down Online Guessing Attacks with Device Cookies").
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { randomId } from "../crypto/random.ts";
import { signInHash } from "../store/rows.ts";
import { cookieName, readCookies, setCookie } from "./cookies.ts";

const DEVICE = "fieldgate_device";
/** How long a browser stays recognized after its last sign-in; every sign-in renews it. */
export const DEVICE_TTL_SECONDS = 180 * 86_400;
const PURPOSE = "fieldgate sign-in device";
// fgdv_<nonce, 22 base64url characters>.<issued at, epoch seconds>.<HMAC, 43 base64url characters>
const DEVICE_VALUE = /^fgdv_([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;
// The key checked for a username nobody signs in with: it matches no cookie, and costs the same HMAC as a real one.
const NOBODY_KEY = "no such user";

/** The name of the device cookie for this deployment (`__Host-` prefixed on https). */
export function deviceCookieName(deps: Pick<Deps, "config">): string {
  return cookieName(deps.config, DEVICE);
}

/**
 * The MAC binding a device cookie to one user and one password. fieldgate has no server-wide secret; the key is the
 * user's stored password hash: a secret only the server holds (salted, never sent), the same for every worker
 * through the database, and replaced when the password is, so `users set-password` voids the user's device cookies.
 */
function deviceMac(deps: Pick<Deps, "hmac">, key: string, signed: { userId: number; nonce: string; issuedAt: number }): Promise<string> {
  return deps.hmac(key, `${PURPOSE}\n${signed.userId}\n${signed.nonce}\n${signed.issuedAt}`);
}

/** The Set-Cookie value recognizing this browser as the one of the user who just signed in with `passwordHash`. */
export async function deviceCookie(deps: Deps, signedIn: { userId: number; passwordHash: string }): Promise<string> {
  const nonce = randomId(deps.random);
  const issuedAt = nowSeconds(deps.clock);
  const mac = await deviceMac(deps, signedIn.passwordHash, { userId: signedIn.userId, nonce, issuedAt });
  return setCookie(deps.config, deviceCookieName(deps), `fgdv_${nonce}.${issuedAt}.${mac}`, DEVICE_TTL_SECONDS);
}

/**
 * The id (nonce) of the request's device cookie when it was issued at a sign-in as `username` with the password it
 * has now, less than DEVICE_TTL_SECONDS ago; otherwise undefined (no cookie, expired, forged, another user's, a
 * password changed since, a user who cannot sign in).
 */
export async function recognizedDevice(deps: Deps, request: Request, username: string): Promise<string | undefined> {
  const match = DEVICE_VALUE.exec(readCookies(request).get(deviceCookieName(deps)) ?? "");
  if (!match) return undefined;
  const [, nonce = "", issued = "", mac = ""] = match;
  const issuedAt = Number(issued);
  if (nowSeconds(deps.clock) - issuedAt >= DEVICE_TTL_SECONDS) return undefined;
  const user = await deps.store.users.findByUsername(username);
  const key = signInHash(user);
  const expected = await deviceMac(deps, key ?? NOBODY_KEY, { userId: user?.id ?? 0, nonce, issuedAt });
  return key !== undefined && constantTimeEqual(expected, mac) ? nonce : undefined;
}
