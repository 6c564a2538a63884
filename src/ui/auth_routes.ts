// Sign-in and sign-out: credential checks with generic errors, throttling, session rotation, CSRF on both forms.
import type { Deps, ThrottleKey } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext, Route } from "../http/router.ts";
import { addressBucket } from "../http/throttle.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { hashPassword, passwordIterations, verifyPassword } from "../crypto/hash.ts";
import { invalidRequest, tooManyRequests } from "../oauth/errors.ts";
import { audit } from "../oauth/audit.ts";
import { MAX_USERNAME_LENGTH, signInHash } from "../store/rows.ts";
import type { User } from "../store/contract.ts";
import { verifyCsrf } from "./csrf.ts";
import { createDemoStore } from "./demo_state.ts";
import { chargeBusyRefusal, createBusyAudit, queuePlace } from "./sign_in_queue.ts";
import { deviceCookie } from "./device.ts";
import { exemptDevice, successKeys, throttleKeys, type SignInKeys } from "./sign_in_keys.ts";
import { clearPreSession, endSession, readPreSession, readSession, sessionCookieValue, startSession } from "./session.ts";
import { waitInWords } from "./error_page.ts";
import { SIGN_IN, SIGN_OUT, signInPage, type SignInPageOptions } from "./sign_in_page.ts";

const GENERIC_FAILURE = "Incorrect username or password";
const BUSY = "fieldgate is busy checking other sign-ins, so your password was not checked. Try again in a few seconds";
/** The busy answer's Retry-After: a full queue at the default settings drains in about this long. */
const BUSY_HEADERS = { "retry-after": "2" };
type BusyAudit = ReturnType<typeof createBusyAudit>;
const TIMED_OUT = "Your sign-in form timed out; enter your password again";
/** The notice of the sign-in page a request that needed a session was sent to (`/signin?session=ended`). */
export const SESSION_ENDED = "ended";
/** Where sign-out goes when its form names no page: the landing page, saying the user has signed out. */
const SIGNED_OUT = "/?signed_out=1";

const DEFAULT_NEXT = "/account";
/** Starts with one "/" (never "//" or "/\\", which name another host) and holds only printable ASCII. */
const LOCAL_ASCII_PATH = /^\/(?![/\\])[\x21-\x7e]*$/;

/**
 * A local path safe to redirect to after sign-in, percent-encoded by the URL parser so it is always a valid
 * Location header value (a raw character above U+00FF makes `Headers` throw). Anything else becomes "/account".
 */
export function safeNext(next: string | undefined): string {
  return localPath(next) ?? DEFAULT_NEXT;
}

/** `next` as a safe local path (see safeNext), or undefined when it is missing or could name another host. */
function localPath(next: string | undefined): string | undefined {
  // Checked before parsing as well: the URL parser drops tabs and newlines and reads a backslash as "/", which would
  // turn "/\t/evil.example" or "/\\evil.example" into another host.
  if (!next || !/^\/(?![/\\])/.test(next) || /[\u0000-\u001f\u007f\\]/.test(next)) return undefined;
  const url = new URL(next, "http://x");
  if (url.origin !== "http://x") return undefined;
  // Dot segments can still collapse to "//host" ("/.//evil.example"), so the parsed result is checked again.
  const local = url.pathname + url.search;
  return LOCAL_ASCII_PATH.test(local) ? local : undefined;
}

/**
 * When sign-in continues an authorization request, the application's name for the page and its redirect URI for the
 * CSP: a remembered consent sends the browser on to the client right after the sign-in form's 303.
 */
async function continuation(deps: Deps, next: string): Promise<{ appName?: string; formTargets?: string[] }> {
  if (!next.startsWith("/oauth/authorize?")) return {};
  const clientId = new URLSearchParams(next.slice(next.indexOf("?") + 1)).get("client_id");
  const client = clientId ? await deps.store.clients.findByClientId(clientId) : undefined;
  if (!client || client.disabled || client.redirectUri === null) return {};
  return { appName: client.name, formTargets: [...client.redirectUris] };
}

// A well-formed hash that matches nothing: unknown users cost one PBKDF2 run like real ones, so the response time
// does not reveal which usernames exist.
function dummyHash(iterations: number): string {
  return `pbkdf2-sha256$${iterations}$${"A".repeat(22)}$${"A".repeat(43)}`;
}

// Only the time a padding derivation takes matters, never its result, so a fixed salt does.
const PADDING_SALT = new Uint8Array(16);

/**
 * After a failed check against `checked`, spends the iterations it has fewer of than configured. Hashes are upgraded
 * only at a successful sign-in, so after FIELDGATE_PBKDF2_ITERATIONS was raised a wrong password for a user with an
 * older hash answered faster than one for an unknown username (checked at the configured count), showing that the
 * account exists. An imported bcrypt digest counts 0 iterations, so it is padded by a whole derivation: a cost-4
 * digest answered in milliseconds. A hash with more iterations than configured (the setting was lowered) and a bcrypt
 * cost that takes longer than one derivation still cost more: docs/security.md#passwords.
 */
async function spendShortfall(deps: Deps, password: string, checked: string): Promise<void> {
  const shortfall = deps.config.pbkdf2Iterations - passwordIterations(checked);
  if (shortfall > 0) await deps.pbkdf2(password, PADDING_SALT, shortfall);
}

/** A user whose password was right, with the hash now stored for it (sessions start only while it still is). */
interface Verified {
  user: User;
  passwordHash: string;
}

async function checkCredentials(deps: Deps, username: string, password: string): Promise<Verified | undefined> {
  const user = username ? await deps.store.users.findByUsername(username) : undefined;
  // Integration users and disabled users cannot sign in; they take the same path as unknown ones.
  const usable = signInHash(user);
  const checked = usable ?? dummyHash(deps.config.pbkdf2Iterations);
  if (!(await verifyPassword(password, checked, deps)) || !usable || !user) {
    await spendShortfall(deps, password, checked);
    return undefined;
  }
  if (passwordIterations(checked) >= deps.config.pbkdf2Iterations) return { user, passwordHash: checked };
  // The stored hash predates a stronger setting: upgrade it now that we hold the plaintext, unless an admin set a
  // new password while this one was being checked (then the old one no longer signs in).
  const { pbkdf2Iterations: iterations } = deps.config;
  const upgraded = await hashPassword(password, { iterations, random: deps.random, pbkdf2: deps.pbkdf2 });
  if (await deps.store.users.updatePasswordHash(user.id, upgraded, { replacing: checked })) {
    return { user, passwordHash: upgraded };
  }
  // The hash changed meanwhile. Another sign-in with the same password (a double-clicked button) may have upgraded
  // it first: that hash verifies this password too. An admin's new password does not.
  const stored = (await deps.store.users.findById(user.id))?.passwordHash;
  if (!stored || !(await verifyPassword(password, stored, deps))) return undefined;
  return { user, passwordHash: stored };
}

type Refused = { refused: { wait: number; error: string } };

const tooManyFailures = (wait: number): Refused => ({ refused: { wait, error: `Too many failed attempts. Try again in ${waitInWords(wait)}` } });

/**
 * Why this attempt may not even wait for a password check, read without counting anything: its failure keys are
 * locked out (reported first when both hold), or its success keys are at their limit. Only successes count against
 * the second, so only someone who knows the password reaches it. Successes still in flight may pass that limit by
 * the few attempts the password work admits at once.
 */
async function refusedBeforeWork(deps: Deps, attempt: { keys: SignInKeys; successes: ThrottleKey[]; now: number }): Promise<Refused | undefined> {
  const { keys, successes, now } = attempt;
  const [wait, again] = await Promise.all([
    deps.throttle.retryAfter(keys.checked, now),
    successes.length === 0 ? 0 : deps.successfulSignIns.retryAfter(successes, now),
  ]);
  if (wait > 0) return tooManyFailures(wait);
  if (again === 0) return undefined;
  return { refused: { wait: again, error: `Too many sign-ins to this account or from this network. Try again in ${waitInWords(again)}` } };
}

/**
 * Once the attempt's turn for password work has come: counts it as a failure before its password is checked, unless
 * its failure keys are locked out by now, then checks the password (an implausible username fails without a
 * lookup). Checked and counted in one step: the check takes tens of milliseconds (PBKDF2), and guesses sent in
 * parallel would otherwise all pass the limit before the first of them failed. `lockout` is true when this count
 * started a lockout. A check that throws (the database was busy, say) is not a wrong password: it is forgiven.
 */
async function chargeAndCheck(
  deps: Deps,
  attempt: { keys: SignInKeys; username: string | undefined; password: string },
): Promise<Refused | { lockout: boolean; verified: Verified | undefined }> {
  const { keys, username } = attempt;
  const { wait, lockout } = await deps.throttle.charge({ checked: keys.checked, counted: keys.counted }, nowSeconds(deps.clock));
  if (wait > 0) return tooManyFailures(wait);
  try {
    return { lockout, verified: username === undefined ? undefined : await checkCredentials(deps, username, attempt.password) };
  } catch (error) {
    await deps.throttle.forgive(keys.counted);
    throw error;
  }
}

/**
 * The sign-in form came back without a valid CSRF token: it was left open past the pre-session cookie's hour,
 * another tab signed in meanwhile, or the browser keeps no cookies. Reloading cannot help (it repeats the POST), so
 * nothing is checked and nobody is signed in here: a browser already signed in goes on to `next`, and any other
 * gets the form again with a new pre-session cookie and token, which its next submission must present as always.
 */
async function formNotAccepted(deps: Deps, request: Request, form: Record<string, string>, hadCookie: boolean): Promise<Response> {
  const next = safeNext(form.next);
  if (await readSession(deps, request)) return redirect(next, 303);
  const username = (form.username ?? "").trim();
  // Without the cookie the form also fails this way in a browser that blocks cookies: say so, or every retry fails.
  const error = hadCookie
    ? TIMED_OUT
    : `${TIMED_OUT}. fieldgate needs cookies to sign you in: if this happens again, allow cookies for ${new URL(deps.config.baseUrl).host}`;
  return signInAgain(deps, request, { next, username, error, status: 400, renew: true });
}

/** The sign-in form again after an attempt that did not sign in, keeping the application and a plausible username. */
async function signInAgain(deps: Deps, request: Request, view: SignInPageOptions & { username: string }): Promise<Response> {
  const username = view.username.length <= MAX_USERNAME_LENGTH ? view.username : "";
  return signInPage(deps, request, { ...view, username, ...(await continuation(deps, view.next)) });
}

async function signInEndpoint(deps: Deps, request: Request, ctx: RequestContext, firstBusyThisWindow: BusyAudit): Promise<Response> {
  const form = await readParams(request, deps.config.maxBodyBytes);
  const pre = readPreSession(deps, request);
  // One pre-session cookie and its token may carry any number of attempts: not single-use, because the failure
  // throttle, the successful sign-in limit and the password work limit already bound what repeated posts can cost.
  if (!(await verifyCsrf(deps, pre, { token: form.csrf, purpose: SIGN_IN }))) return formNotAccepted(deps, request, form, pre !== undefined);
  const username = (form.username ?? "").trim();
  const next = safeNext(form.next);
  // No account has a longer name: such a name fails like a wrong password, without a lookup or password work.
  const plausible = username.length <= MAX_USERNAME_LENGTH;
  const now = nowSeconds(deps.clock);
  const device = plausible ? await exemptDevice(deps, request, username, now) : undefined;
  const keys = throttleKeys(plausible ? username : undefined, ctx.clientIp, device);
  const successes = plausible ? successKeys(username, ctx.clientIp) : [];
  // The form again rather than a dead-end page: it keeps the application and username, and says how long to wait.
  const tooMany = ({ refused }: Refused) =>
    signInAgain(deps, request, { next, username, error: refused.error, status: 429, headers: tooManyRequests(refused.wait).headers });
  const early = await refusedBeforeWork(deps, { keys, successes, now });
  if (early) return tooMany(early);
  const attempt = () => chargeAndCheck(deps, { keys, username: plausible ? username : undefined, password: form.password ?? "" });
  const bucket = addressBucket(ctx.clientIp);
  const checking = plausible ? deps.passwordWork.run(attempt, queuePlace({ bucket, username, device })) : attempt();
  if (!checking) {
    // Every place this attempt may take is taken: answered at once rather than held; no password was checked.
    await chargeBusyRefusal(deps, { address: keys.address, bucket, ip: ctx.clientIp, now, firstThisWindow: firstBusyThisWindow });
    return signInAgain(deps, request, { next, username, error: BUSY, status: 503, headers: BUSY_HEADERS });
  }
  // Counted as a failure when its turn came, before the password was checked; a success takes it back. The attempt
  // that reaches the limit starts the lockout, and only it audits one.
  const checked = await checking;
  if ("refused" in checked) return tooMany(checked);
  const { lockout, verified } = checked;
  let session: string | undefined;
  try {
    // PBKDF2 takes long enough for an admin to set a new password (ending every session) or disable the user
    // meanwhile: the session starts only if the hash just verified is still the stored one, in its transaction.
    session = verified && await startSession(deps, request, { userId: verified.user.id, passwordHash: verified.passwordHash });
  } catch (error) {
    // Not a wrong password (the database was busy, say): the attempt does not count.
    await deps.throttle.forgive(keys.counted);
    throw error;
  }
  if (!verified || !session) {
    await audit(deps, "sign_in_failed", { ip: ctx.clientIp });
    if (lockout) await audit(deps, "throttled", { ip: ctx.clientIp, detail: { surface: "sign_in" } });
    return signInAgain(deps, request, { next, username, error: GENERIC_FAILURE, rejected: true, status: 400 });
  }
  // The failures of this username from here and of this device are forgotten; the shared keys only get this
  // attempt back: resetting them would let one valid sign-in launder a spraying attack.
  await deps.throttle.reset(keys.own);
  await deps.throttle.forgive(keys.shared);
  const limitReached = await deps.successfulSignIns.fail(successes, now);
  const response = redirect(next, 303);
  await audit(deps, "sign_in_succeeded", { userId: verified.user.id, ip: ctx.clientIp });
  if (limitReached) await audit(deps, "throttled", { userId: verified.user.id, ip: ctx.clientIp, detail: { surface: "sign_in_successes" } });
  response.headers.append("set-cookie", session);
  response.headers.append("set-cookie", clearPreSession(deps));
  // This browser is recognized at its next sign-ins as this user's, even while the username is locked out.
  response.headers.append("set-cookie", await deviceCookie(deps, { userId: verified.user.id, passwordHash: verified.passwordHash }));
  return response;
}

/**
 * POST /signout acts only when the request carries a session cookie and the sign-out token keyed by it. Another
 * site's form arrives without our SameSite=Lax cookies, and answering it with Set-Cookie headers that clear them
 * would still sign the user out (and end their demo) from anywhere. The cookie of a session that ended while the page
 * was open still keys its token, so Sign out keeps working there.
 */
async function signOutEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const form = await readParams(request, deps.config.maxBodyBytes);
  // The consent page's form names its authorization request, so the user signs in as someone else and carries on;
  // otherwise the landing page confirms the sign-out. Local paths only, as after sign-in.
  const target = localPath(form.next) ?? SIGNED_OUT;
  const cookie = sessionCookieValue(deps, request);
  // Nobody is signed in here: nothing to end, and no cookie to clear.
  if (!cookie) return redirect(target, 303);
  if (!(await verifyCsrf(deps, cookie, { token: form.csrf, purpose: SIGN_OUT }))) {
    throw invalidRequest("The sign-out form has expired; reload the page and try again", { status: 403 });
  }
  const signedIn = await readSession(deps, request);
  if (signedIn) await audit(deps, "signed_out", { userId: signedIn.user.id, ip: ctx.clientIp });
  const response = redirect(target, 303);
  response.headers.append("set-cookie", await endSession(deps, request));
  // A demo run in this browser acted for the user signing out; it ends with the session (its state and cookie).
  response.headers.append("set-cookie", await createDemoStore(deps).forget(request));
  return response;
}

async function signInForm(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const next = safeNext(ctx.url.searchParams.get("next") ?? undefined);
  if (await readSession(deps, request)) return redirect(next, 303);
  // A fixed sentence chosen by a flag, never text from the URL: a crafted link can show only this.
  const notice = ctx.url.searchParams.get("session") === SESSION_ENDED
    ? "Your session had ended, so nothing was changed. Sign in to continue."
    : undefined;
  return signInPage(deps, request, { next, notice, ...(await continuation(deps, next)) });
}

/** Routes of sign-in and sign-out. */
export function authRoutes(deps: Deps): Route[] {
  const firstBusyThisWindow = createBusyAudit(deps.config.throttleWindowSeconds);
  return [
    { method: "GET", path: "/signin", surface: "html", handler: (req, ctx) => signInForm(deps, req, ctx) },
    { method: "POST", path: "/signin", surface: "html", handler: (req, ctx) => signInEndpoint(deps, req, ctx, firstBusyThisWindow) },
    { method: "POST", path: "/signout", surface: "html", handler: (req, ctx) => signOutEndpoint(deps, req, ctx) },
  ];
}
