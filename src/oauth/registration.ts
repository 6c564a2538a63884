// Out-of-band registration (RFC 6749 §2): the rules for users, clients, redirect URIs and scopes, and creating them;
// the CLI and the demo seed both register through it.
import { KNOWN_SCOPES } from "../config.ts";
import type { Random } from "../deps.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import type { Client, ClientGrantType, Store, User } from "../store/contract.ts";
import { MAX_USERNAME_LENGTH } from "../store/rows.ts";
import { RESPONSE_PARAMETERS } from "./authorize_request.ts";
import { LOOPBACK_HOSTS } from "./redirect_uri.ts";

/**
 * A registration refused: `invalid` for a value the rules reject, `taken` for a username already in use. The message
 * names the command-line flag, since the CLI is where values are typed.
 */
export class RegistrationError extends Error {
  readonly reason: "invalid" | "taken";
  constructor(reason: "invalid" | "taken", message: string) {
    super(message);
    this.name = "RegistrationError";
    this.reason = reason;
  }
}

const invalid = (message: string) => new RegistrationError("invalid", message);

/** Most redirect URIs one client registers: each is compared at every authorization request. */
export const MAX_REDIRECT_URIS = 20;

/** Shorter passwords are refused: NIST SP 800-63B §5.1.1.2 asks for at least 8; we ask a little more. */
export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * Checks a redirect URI for registration: absolute, no fragment (RFC 6749 §3.1.2), https except on loopback hosts
 * (RFC 8252 §7.3), no wildcard and no userinfo, since it is compared by exact string match later (a loopback URI's
 * port included: another port does not match), and no query parameter the authorization response adds (a client
 * would read ours or its own first, depending on its parser).
 */
export function validateRedirectUri(raw: string, label = "--redirect-uri"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`${label} must be an absolute URL, got "${raw}"`);
  }
  if (raw.includes("#")) throw invalid(`${label} must not contain a fragment`);
  if (raw.includes("*")) throw invalid(`${label} must not contain a wildcard`);
  if (url.username || url.password) throw invalid(`${label} must not contain user information`);
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw invalid(`${label} must use https (http is allowed only for 127.0.0.1, [::1] and localhost)`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    // "localhost:3000/cb" parses as the scheme "localhost:": the usual slip is a missing "http://".
    throw invalid(`${label} must start with https:// (or http:// on a loopback host), got "${raw}"`);
  }
  if (raw.length > 2000) throw invalid(`${label} is longer than 2000 characters`);
  // Compared by exact string later, and sent back as a URL serialises it: a form the URL parser rewrites (a
  // missing "/" path, an uppercase host, a raw quote in the query) would never match what the browser arrives with.
  if (url.href !== raw) throw invalid(`${label} must be written as the URL standard writes it: "${url.href}"`);
  const taken = [...url.searchParams.keys()].find((name) => RESPONSE_PARAMETERS.has(name));
  if (taken !== undefined) {
    throw invalid(`${label} must not have a "${taken}" query parameter: the authorization response adds it`);
  }
  return raw;
}

/** Normalises a space-separated scope, refusing scopes the service does not know (RFC 6749 §3.3). */
export function validateScope(raw: string): string {
  const scopes = [...new Set(raw.split(" ").filter(Boolean))];
  if (scopes.length === 0) throw invalid("--scope must name at least one scope");
  const unknown = scopes.filter((s) => !Object.hasOwn(KNOWN_SCOPES, s));
  if (unknown.length > 0) {
    throw invalid(`unknown scope ${unknown.join(", ")}; known scopes: ${Object.keys(KNOWN_SCOPES).join(", ")}`);
  }
  return scopes.join(" ");
}

// Printable means visible too: format characters (zero-width space, bidi overrides), other separators, private-use
// and lone surrogate code points would let `alice@example.com` and a look-alike with an invisible character coexist.
const USERNAME = /^[^\s\p{Cc}\p{Cf}\p{Z}\p{Co}\p{Cs}]+$/u;

/** Usernames are sign-in names: printable, no spaces, at most 254 characters (an e-mail address fits). */
export function validateUsername(raw: string): string {
  // The length in UTF-16 units, as the sign-in check and the form's maxlength count it (an emoji is two).
  if (raw.length > MAX_USERNAME_LENGTH || !USERNAME.test(raw)) {
    throw invalid(`--username must be 1 to ${MAX_USERNAME_LENGTH} printable characters without spaces`);
  }
  return raw;
}

/** Checks a password's length; the text itself is never echoed. */
export function validatePassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw invalid(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) throw invalid(`the password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return password;
}

/** Organization slugs: lowercase letters, digits and dashes, as used in --org. */
export function validateOrgSlug(raw: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(raw)) throw invalid("--org must be lowercase letters, digits and dashes (at most 63)");
  return raw;
}

/** Creates a user and its membership in `org` (created if missing); refuses a taken username before writing. */
export async function createUser(
  store: Store,
  input: { username: string; name: string | null; org: string; orgName?: string; passwordHash: string | null; now: number },
): Promise<User> {
  if (await store.users.findByUsername(input.username)) {
    throw new RegistrationError("taken", `username "${input.username}" is already taken`);
  }
  // One transaction: a concurrent `users add` that takes the name first must not leave this one's new
  // organization behind without members.
  return store.users.insertMember({
    username: input.username,
    name: input.name,
    kind: input.passwordHash === null ? "integration" : "person",
    passwordHash: input.passwordHash,
    now: input.now,
  }, input.org, input.orgName);
}

/** Registers a client with a fresh id and secret; only the secret's SHA-256 is stored, the secret is returned once. */
export async function createClient(
  store: Store,
  input: {
    name: string;
    grantType: ClientGrantType | null;
    redirectUris: readonly string[];
    scope: string;
    integrationUserId: number | null;
    requireDpop?: boolean;
  },
  options: { random: Random; now: number },
): Promise<{ client: Client; clientSecret: string }> {
  const clientSecret = randomToken(options.random, "clientSecret");
  const client = await store.clients.insert({
    // Operators type client ids as command-line arguments: a leading "-" would read as an option (1 id in 64).
    clientId: randomId(options.random).replace(/^-/, "A"),
    secretHash: await sha256Hex(clientSecret),
    ...input,
    now: options.now,
  });
  return { client, clientSecret };
}
