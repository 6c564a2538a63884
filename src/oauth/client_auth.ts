// Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3.1), throttled.
import type { Deps, ThrottleKey } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext } from "../http/router.ts";
import type { Params } from "../http/body.ts";
import { addressBucket } from "../http/throttle.ts";
import type { TokenClient } from "../store/contract.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { audit, type AuditEventName, type AuditFacts } from "./audit.ts";
import { invalidClient, invalidRequest, type OAuthError, tooManyRequests } from "./errors.ts";

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post";

/** How a request presented its credentials: a supported method, or an Authorization scheme other than Basic. */
type PresentedMethod = ClientAuthMethod | "unsupported_scheme";

interface Presented {
  clientId: string | undefined;
  secret: string | undefined;
  method: PresentedMethod;
}

/**
 * Sent with every invalid_client 401: HTTP requires a challenge on any 401 (RFC 9110 §15.5.2), and Basic is the
 * header scheme this server takes for clients (RFC 6749 §5.2 requires it when the client tried Basic).
 */
const CLIENT_CHALLENGE = { "www-authenticate": 'Basic realm="fieldgate"' };

/**
 * The client authenticated, but its secret was rotated or the client disabled before the request's write
 * committed (store/sqlite/still_authorized.ts): answered like any failed client authentication, without counting
 * toward the throttle (it was no guess).
 */
export function clientAuthenticationWithdrawn(): OAuthError {
  return invalidClient("Client authentication failed", { headers: CLIENT_CHALLENGE });
}

/** Parameters that carry credentials and must never travel in a URL, where logs and referrers keep them. */
const URL_FORBIDDEN = [
  "client_id",
  "client_secret",
  "code",
  "code_verifier",
  "refresh_token",
  "token",
  "access_token",
];

/**
 * Refuses OAuth parameters in the query string: RFC 6749 §2.3.1 requires credentials in the body or header.
 * @throws OAuthError invalid_request
 */
export function refuseQueryCredentials(url: URL): void {
  for (const name of URL_FORBIDDEN) {
    if (url.searchParams.has(name)) {
      throw invalidRequest(`Parameter ${name} must be sent in the request body, not the URL`);
    }
  }
}

// RFC 6749 §2.3.1 / Appendix B: Basic user and password are form-urlencoded before base64.
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch (error) {
    throw invalidRequest("Authorization header is not valid Basic credentials", { cause: error });
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeBasic(encoded: string): { user: string; password: string } {
  let text: string;
  try {
    text = utf8.decode(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0)));
  } catch (error) {
    throw invalidRequest("Authorization header is not valid Basic credentials", { cause: error });
  }
  const colon = text.indexOf(":");
  if (colon < 0) throw invalidRequest("Authorization header is not valid Basic credentials");
  return { user: formDecode(text.slice(0, colon)), password: formDecode(text.slice(colon + 1)) };
}

/** Which credentials the request carries, refusing two methods at once (RFC 6749 §2.3). */
function presentedCredentials(request: Request, params: Params): Presented {
  const header = request.headers.get("authorization");
  if (header === null) {
    return { clientId: params.client_id, secret: params.client_secret, method: "client_secret_post" };
  }
  // Another scheme (Bearer, Digest) is an unsupported authentication method, which RFC 6749 §5.2 files under
  // invalid_client; a Basic header that does not decode is a malformed request.
  if (!/^Basic(?: |$)/i.test(header)) return { clientId: undefined, secret: undefined, method: "unsupported_scheme" };
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) throw invalidRequest("Authorization header is not valid Basic credentials");
  const { user, password } = decodeBasic(match[1]!);
  if (params.client_secret !== undefined) {
    throw invalidRequest("Use one client authentication method: Basic or body credentials, not both");
  }
  // A client_id in the body alongside Basic is harmless when it names the same client (some libraries send it).
  if (params.client_id !== undefined && params.client_id !== user) {
    throw invalidRequest("client_id in the body does not match the Basic credentials");
  }
  return { clientId: user || undefined, secret: password || undefined, method: "client_secret_basic" };
}

/**
 * The key of one registered client's failures from one address, the only key that can refuse that client: a client
 * that keeps failing is throttled there, and nobody else's failures ever slow it. "Address" is the addressBucket:
 * an IPv6 /64, so rotating through one's own /64 does not mint fresh keys.
 */
function clientKey(clientId: string, ip: string): ThrottleKey {
  return { id: `client:${clientId}|ip:${addressBucket(ip)}` };
}

/**
 * The key of every failure from one address, which refuses only what has no registered client behind it (unknown
 * client_ids, missing credentials): shared, since many honest clients may sit behind one address.
 */
function addressKey(ip: string): ThrottleKey {
  return { id: `ip:${addressBucket(ip)}`, shared: true };
}

/** The only shape of client id fieldgate issues (randomId: 16 random bytes, base64url). */
const ISSUED_CLIENT_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * The client a refusal records: a registered client's own id, or a presented id only when it has the shape of the
 * ids fieldgate issues. Anything else may be a secret, a token or a password sent in the wrong field (swapped
 * credentials are a common integration mistake), and must reach neither the log nor the audit table.
 */
function recordedClientId(presented: string, client: TokenClient | undefined): string | undefined {
  if (client) return client.clientId;
  return ISSUED_CLIENT_ID.test(presented) ? presented : undefined;
}

/** The facts of one authentication attempt that every refusal records. */
interface Attempt {
  now: number;
  ip: string;
  method: PresentedMethod;
}

/** A failed attempt: the keys its failure counts against, why it failed, and the client id it may record. */
interface Failure {
  keys: readonly ThrottleKey[];
  reason: string;
  clientId?: string;
}

/**
 * Audits a failed attempt whose failure was counted (`lockout`: that count started a lockout), and builds the
 * invalid_client error to throw.
 */
async function refusal(deps: Deps, attempt: Attempt, failure: Failure & { lockout: boolean }): Promise<OAuthError> {
  const { now, ip, method } = attempt;
  const { keys, reason, clientId, lockout } = failure;
  const events: [AuditEventName, AuditFacts][] = [["client_auth_failed", { clientId, ip, detail: { reason, method } }]];
  // Audited once, when this failure starts the lockout; the refused requests that follow are not, so a
  // flood of them cannot flood the audit table.
  if (lockout) events.push(["throttled", { clientId, ip, detail: { retry_after: await deps.throttle.retryAfter(keys, now) } }]);
  for (const [event, facts] of events) await audit(deps, event, facts);
  return invalidClient("Client authentication failed", { headers: CLIENT_CHALLENGE });
}

/**
 * Authenticates the client by client_secret_post or client_secret_basic, throttling repeated failures.
 *
 * The secret's digest is made first; the store then looks the client up, checks the digest and counts the outcome
 * in one step (Throttle.authenticateClient), since the rule depends on the client: a registered client is refused
 * only for its own failures from this address, so other parties' failures there never slow it. An unknown client_id
 * has no secret to guess, so it gets no key of its own (rotating random ids neither grows the table nor escapes a
 * limit) and is refused once the address's failures reach the shared limit. `fromMemory`: the caller issues next and
 * decides again on a fresh read whatever a remembered answer (TokenClient.remembered) leads it to refuse.
 * @throws OAuthError invalid_client (401), invalid_request (400), too_many_requests (429 with Retry-After)
 */
export async function authenticateClient(
  deps: Deps,
  request: Request,
  options: { params: Params; ctx: RequestContext; fromMemory?: boolean },
): Promise<TokenClient> {
  const { params, ctx } = options;
  const presented = presentedCredentials(request, params);
  const attempt: Attempt = { now: nowSeconds(deps.clock), ip: ctx.clientIp, method: presented.method };
  const checked = await checkedAttempt(deps, presented, attempt, options.fromMemory ?? false);
  if (checked.outcome === "authenticated") return checked.client;
  if (checked.outcome === "refused") throw tooManyRequests(checked.wait);
  throw await refusal(deps, attempt, checked.failure);
}

/** How an attempt ended: the client it authenticated, refused unchecked for `wait` seconds, or a counted failure. */
type Checked =
  | { outcome: "authenticated"; client: TokenClient }
  | { outcome: "refused"; wait: number }
  | { outcome: "failed"; failure: Failure & { lockout: boolean } };

/** Checks the presented credentials and counts the outcome, in one step of the throttle's store. */
async function checkedAttempt(deps: Deps, presented: Presented, attempt: Attempt, fromMemory: boolean): Promise<Checked> {
  const { now, ip } = attempt;
  const clientId = presented.clientId;
  if (presented.method === "unsupported_scheme" || clientId === undefined) {
    // No client to check: the address's failure, once it is locked out 429 without another audit row.
    const address = [addressKey(ip)];
    const { wait, lockout } = await deps.throttle.charge({ checked: address, counted: address }, now);
    if (wait > 0) return { outcome: "refused", wait };
    const reason = presented.method === "unsupported_scheme" ? "unsupported_scheme" : "missing_client_id";
    return { outcome: "failed", failure: { keys: address, reason, lockout } };
  }
  const digest = presented.secret === undefined ? undefined : await deps.digest(presented.secret);
  const keys = { registered: clientKey(clientId, ip), unknown: addressKey(ip) };
  const checked = await deps.throttle.authenticateClient({ clientId, digest, keys, fromMemory }, now);
  if (checked.outcome !== "failed") return checked;
  // The store counted a failure; its reason is the one failureOf() finds.
  return { outcome: "failed", failure: { ...failureOf(checked.client, { clientId, digest, ip }), lockout: checked.lockout } };
}

/**
 * Why presenting `digest` (none: no secret) for `clientId`, whose row is `client` (none: unknown), failed, and the
 * keys that failure counted against.
 */
function failureOf(client: TokenClient | undefined, presented: { clientId: string; digest: string | undefined; ip: string }): Failure {
  const { clientId, digest, ip } = presented;
  // Every failure counts against the address too, so a spray that mixes in registered ids still fills it.
  const keys = client ? [clientKey(client.clientId, ip), addressKey(ip)] : [addressKey(ip)];
  const recorded = recordedClientId(clientId, client);
  if (digest === undefined) return { keys, reason: "missing_secret", clientId: recorded };
  if (!client) return { keys, reason: "unknown_client", clientId: recorded };
  // A disabled client is refused exactly like a wrong secret; the audit row says which it was.
  const matches = constantTimeEqual(digest, client.secretHash);
  return { keys, reason: client.disabled && matches ? "client_disabled" : "bad_secret", clientId: client.clientId };
}
