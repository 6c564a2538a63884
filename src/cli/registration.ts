// Out-of-band registration (spec §1): validating and creating users and clients; shared by the CLI and the demo seed.
import { KNOWN_SCOPES } from "../config.ts";
import type { Random } from "../deps.ts";
import { sha256Hex } from "../crypto/hash.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import type { Client, ClientGrantType } from "../store/clients.ts";
import type { Store } from "../store/store.ts";
import { MAX_USERNAME_LENGTH, type User } from "../store/users.ts";
import { RESPONSE_PARAMETERS } from "../oauth/authorize_request.ts";
import { LOOPBACK_HOSTS } from "../oauth/redirect_uri.ts";
import { CommandError, UsageError } from "./types.ts";

/** Most redirect URIs one client registers: each is compared at every authorization request. */
export const MAX_REDIRECT_URIS = 20;

/** Shorter passwords are refused: NIST SP 800-63B §5.1.1.2 asks for at least 8; we ask a little more. */
export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * Checks a redirect URI for registration: absolute, no fragment (RFC 6749 §3.1.2), https except on loopback hosts
 * (RFC 8252 §7.3; any port is then accepted at request time), no wildcard and no userinfo, since it is compared by
 * exact string match later, and no query
 * parameter the authorization response adds (a client would read ours or its own first, depending on its parser).
 */
export function validateRedirectUri(raw: string, label = "--redirect-uri"): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${label} must be an absolute URL, got "${raw}"`);
  }
  if (raw.includes("#")) throw new UsageError(`${label} must not contain a fragment`);
  if (raw.includes("*")) throw new UsageError(`${label} must not contain a wildcard`);
  if (url.username || url.password) throw new UsageError(`${label} must not contain user information`);
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new UsageError(`${label} must use https (http is allowed only for 127.0.0.1, [::1] and localhost)`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    // "localhost:3000/cb" parses as the scheme "localhost:": the usual slip is a missing "http://".
    throw new UsageError(`${label} must start with https:// (or http:// on a loopback host), got "${raw}"`);
  }
  if (raw.length > 2000) throw new UsageError(`${label} is longer than 2000 characters`);
  // Compared by exact string later, and sent back as a URL serialises it: a form the URL parser rewrites (a
  // missing "/" path, an uppercase host, a raw quote in the query) would never match what the browser arrives with.
  if (url.href !== raw) throw new UsageError(`${label} must be written as the URL standard writes it: "${url.href}"`);
  const taken = [...url.searchParams.keys()].find((name) => RESPONSE_PARAMETERS.has(name));
  if (taken !== undefined) {
    throw new UsageError(`${label} must not have a "${taken}" query parameter: the authorization response adds it`);
  }
  return raw;
}

/** Normalises a space-separated scope, refusing scopes the service does not know (RFC 6749 §3.3). */
export function validateScope(raw: string): string {
  const scopes = [...new Set(raw.split(" ").filter(Boolean))];
  if (scopes.length === 0) throw new UsageError("--scope must name at least one scope");
  const unknown = scopes.filter((s) => !Object.hasOwn(KNOWN_SCOPES, s));
  if (unknown.length > 0) {
    throw new UsageError(`unknown scope ${unknown.join(", ")}; known scopes: ${Object.keys(KNOWN_SCOPES).join(", ")}`);
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
    throw new UsageError(`--username must be 1 to ${MAX_USERNAME_LENGTH} printable characters without spaces`);
  }
  return raw;
}

/** Checks a password's length; the text itself is never echoed. */
export function validatePassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new UsageError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) throw new UsageError(`the password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return password;
}

/** What a terminal shows when --password-stdin reads from it (the text is not echoed). */
export const PASSWORD_PROMPT = `Password (at least ${MIN_PASSWORD_LENGTH} characters, not shown; Enter to finish): `;

/**
 * The password in stdin's text: the one line ending `echo` or a here-string adds is removed, other whitespace is
 * part of the password.
 * @throws UsageError when it is too short or too long
 */
export function passwordFromStdin(text: string): string {
  return validatePassword(text.replace(/\r?\n$/, ""));
}

/** Organization slugs: lowercase letters, digits and dashes, as used in --org. */
export function validateOrgSlug(raw: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(raw)) throw new UsageError("--org must be lowercase letters, digits and dashes (at most 63)");
  return raw;
}

/** Creates a user and its membership in `org` (created if missing); refuses a taken username before writing. */
export async function createUser(
  store: Store,
  input: { username: string; name: string | null; org: string; orgName?: string; passwordHash: string | null; now: number },
): Promise<User> {
  if (await store.users.findByUsername(input.username)) {
    throw new CommandError(`username "${input.username}" is already taken`);
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
  input: { name: string; grantType: ClientGrantType; redirectUris: readonly string[]; scope: string; integrationUserId: number | null },
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

/** A client as shown by list/show: every registration fact, never the secret digest. */
export function describeClient(client: Client, integrationUsername?: string): Record<string, unknown> {
  return {
    client_id: client.clientId,
    name: client.name,
    grant_type: client.grantType,
    redirect_uri: client.redirectUri,
    redirect_uris: client.redirectUris,
    scope: client.scope,
    integration_user: integrationUsername ?? null,
    disabled: client.disabled,
    created_at: client.createdAt,
    secret_rotated_at: client.secretRotatedAt,
  };
}
