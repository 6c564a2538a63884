// Browser sessions: a random cookie stored hashed with an expiry, rotated at sign-in, and the pre-session cookie.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { randomToken } from "../crypto/random.ts";
import type { User } from "../store/contract.ts";
import { cookieName, readCookies, setCookie } from "./cookies.ts";

/** A signed-in browser: the cookie value (the CSRF key) and the user behind it. */
export interface SignedIn {
  cookieValue: string;
  /** The digest the session is stored under, for writes that must re-check it (a code's basis). */
  sessionHash: string;
  user: User;
}

const SESSION = "fieldgate_session";
const PRE_SESSION = "fieldgate_presession";
/** Long enough to fill in the sign-in form, short enough not to linger. */
const PRE_SESSION_TTL_SECONDS = 3_600;
// Our cookie values are prefix + 43 base64url characters; anything else is not worth a database lookup.
const COOKIE_VALUE = /^fg[a-z]{2}_[A-Za-z0-9_-]{43}$/;

/** The session cookie's name for this deployment (`__Host-` prefixed on https). */
export function sessionCookieName(deps: Pick<Deps, "config">): string {
  return cookieName(deps.config, SESSION);
}

function cookieValue(request: Request, name: string): string | undefined {
  const value = readCookies(request).get(name);
  return value !== undefined && COOKIE_VALUE.test(value) ? value : undefined;
}

/**
 * The well-formed session cookie value the request carried, whether or not its session is still active: the key of
 * the sign-out form's CSRF token, which stays valid for a session that ended while the page was open.
 */
export function sessionCookieValue(deps: Pick<Deps, "config">, request: Request): string | undefined {
  return cookieValue(request, sessionCookieName(deps));
}

/** The signed-in user of this request, or undefined (no cookie, unknown, expired, or user disabled). */
export async function readSession(deps: Deps, request: Request): Promise<SignedIn | undefined> {
  const value = cookieValue(request, sessionCookieName(deps));
  if (!value) return undefined;
  const sessionHash = await deps.digest(value);
  const session = await deps.store.sessions.findActive(sessionHash, nowSeconds(deps.clock));
  if (!session) return undefined;
  const user = await deps.store.users.findById(session.userId);
  if (!user || user.disabled || user.kind !== "person") return undefined;
  return { cookieValue: value, sessionHash, user };
}

/**
 * Starts a session for `userId`: a fresh cookie value, and the request's old session (if any) deleted in the same
 * store operation, so an id planted before sign-in is never the one that becomes authenticated (session fixation).
 * Only while `passwordHash` (the one just verified) is still the user's and the user is enabled. Beyond
 * FIELDGATE_MAX_SESSIONS live sessions the user's oldest end, so repeated sign-ins cannot pile up rows without bound.
 * @returns the Set-Cookie header value, or undefined when the password changed or the user was disabled meanwhile
 */
export async function startSession(
  deps: Deps,
  request: Request,
  signedIn: { userId: number; passwordHash: string },
): Promise<string | undefined> {
  const value = randomToken(deps.random, "session");
  const old = cookieValue(request, sessionCookieName(deps));
  const now = nowSeconds(deps.clock);
  const started = await deps.store.sessions.replace(old ? await deps.digest(old) : undefined, {
    sessionHash: await deps.digest(value),
    userId: signedIn.userId,
    createdAt: now,
    expiresAt: now + deps.config.sessionTtlSeconds,
  }, { passwordHash: signedIn.passwordHash, maxSessions: deps.config.maxSessionsPerUser });
  return started ? setCookie(deps.config, sessionCookieName(deps), value, deps.config.sessionTtlSeconds) : undefined;
}

/** Ends the request's session server-side; returns the Set-Cookie value that clears it in the browser. */
export async function endSession(deps: Deps, request: Request): Promise<string> {
  const value = cookieValue(request, sessionCookieName(deps));
  if (value) await deps.store.sessions.delete(await deps.digest(value));
  return setCookie(deps.config, sessionCookieName(deps), "", 0);
}

/**
 * The pre-session cookie that keys the sign-in form's CSRF token (there is no session yet to bind to).
 * Returns the existing value, or a new one plus the Set-Cookie header that plants it.
 */
export function preSession(deps: Deps, request: Request): { value: string; setCookie?: string } {
  const existing = cookieValue(request, cookieName(deps.config, PRE_SESSION));
  return existing ? { value: existing } : newPreSession(deps);
}

/** A new pre-session value and the Set-Cookie header that plants it for the full lifetime. */
export function newPreSession(deps: Deps): { value: string; setCookie: string } {
  const value = randomToken(deps.random, "csrf");
  return { value, setCookie: setCookie(deps.config, cookieName(deps.config, PRE_SESSION), value, PRE_SESSION_TTL_SECONDS) };
}

/** The pre-session cookie value the browser sent, if well-formed. */
export function readPreSession(deps: Deps, request: Request): string | undefined {
  return cookieValue(request, cookieName(deps.config, PRE_SESSION));
}

/** The Set-Cookie value deleting the pre-session cookie once a real session exists. */
export function clearPreSession(deps: Deps): string {
  return setCookie(deps.config, cookieName(deps.config, PRE_SESSION), "", 0);
}
