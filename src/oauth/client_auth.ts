// Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3.1), throttled.
import type { Deps, ThrottleKey } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext } from "../http/router.ts";
import type { Params } from "../http/body.ts";
import { addressBucket } from "../http/throttle.ts";
import type { TokenClient } from "../store/clients.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { audit } from "./audit.ts";
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
 * committed (store/still_authorized.ts): answered like any failed client authentication, without counting
 * toward the throttle (it was no guess).
 */
export function clientAuthenticationWithdrawn(): OAuthError {
  return invalidClient("Client authentication failed", { headers: CLIENT_CHALLENGE });
}

/** Compared against when the client_id is unknown, so unknown and known ids take the same time. */
const DUMMY_DIGEST = "0".repeat(64);

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

/**
 * A write re-checked a client authenticateClient answered from memory and succeeded: the authentication is now as
 * good as a fresh one, so its failures from this address are cleared as a fresh success clears them.
 */
export async function rememberedClientConfirmed(deps: Deps, client: TokenClient, ctx: RequestContext): Promise<void> {
  await deps.throttle.reset([clientKey(client.clientId, ctx.clientIp)]);
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
  await audit(deps, "client_auth_failed", { clientId, ip, detail: { reason, method } });
  // Audited once, when this failure starts the lockout; the refused requests that follow are not, so a
  // flood of them cannot flood the audit table.
  if (lockout) {
    await audit(deps, "throttled", { clientId, ip, detail: { retry_after: await deps.throttle.retryAfter(keys, now) } });
  }
  return invalidClient("Client authentication failed", { headers: CLIENT_CHALLENGE });
}

/** Refuses a request that names no client (no client_id, or another Authorization scheme): the address's failure. */
async function refuseWithoutClient(deps: Deps, attempt: Attempt): Promise<OAuthError> {
  // Counted against the address alone; once it is locked out, 429 without another audit row.
  const address = [addressKey(attempt.ip)];
  const { wait, lockout } = await deps.throttle.charge({ checked: address, counted: address }, attempt.now);
  if (wait > 0) return tooManyRequests(wait);
  const reason = attempt.method === "unsupported_scheme" ? "unsupported_scheme" : "missing_client_id";
  return await refusal(deps, attempt, { keys: address, reason, lockout });
}

/**
 * Authenticates the client by client_secret_post or client_secret_basic, throttling repeated failures.
 *
 * The client is looked up before the throttle decides, since the rule depends on it: a registered client is refused
 * only for its own failures from this address, so other parties' failures there never slow it. An unknown client_id
 * has no secret to guess, so it gets no key of its own (rotating random ids neither grows the table nor escapes a
 * limit) and is refused once the address's failures reach the shared limit; a lookup is all such a refusal costs.
 *
 * With `mayRemember`, a secret that matches the row remembered for the client (ClientStore
 * rememberedForTokenRequest) authenticates without reading the database, and the client comes back marked
 * `remembered`: the caller must then write only through a transaction that re-checks it (clientAndUserStill),
 * answer any refusal from a second, fresh authentication, and call rememberedClientConfirmed once the write
 * succeeded (until then the row proves nothing, so the client's failure count is not cleared). Anything else (no row
 * remembered, another secret) is read fresh, so no refusal is ever decided on a remembered row.
 * @throws OAuthError invalid_client (401), invalid_request (400), too_many_requests (429 with Retry-After)
 */
export async function authenticateClient(
  deps: Deps,
  request: Request,
  options: { params: Params; ctx: RequestContext; mayRemember?: boolean },
): Promise<TokenClient> {
  const { params, ctx, mayRemember = false } = options;
  const presented = presentedCredentials(request, params);
  const now = nowSeconds(deps.clock);
  const attempt: Attempt = { now, ip: ctx.clientIp, method: presented.method };
  const clientId = presented.clientId;
  if (presented.method === "unsupported_scheme" || clientId === undefined) throw await refuseWithoutClient(deps, attempt);
  if (deps.throttle.checkClient) return await checkedInStore(deps, deps.throttle.checkClient, { presented, clientId, attempt });
  const remembered = mayRemember ? deps.store.clients.rememberedForTokenRequest(clientId) : undefined;
  const registered = remembered ?? await deps.store.clients.findForTokenRequest(clientId);
  const address = addressKey(ctx.clientIp);
  const gate = [registered ? clientKey(registered.clientId, ctx.clientIp) : address];
  // Pending until settled: the outcome is known only after the awaits below (an embedder's digest may be truly
  // asynchronous), and parallel guesses must not all pass this check before the first failure counts.
  const wait = await deps.throttle.admit(gate, now);
  if (wait > 0) throw tooManyRequests(wait);
  let checked: Checked;
  try {
    checked = await checkSecret(deps, { presented, clientId, remembered, registered, ip: ctx.clientIp });
  } catch (error) {
    // Not a wrong secret (the store failed): the attempt ends without counting.
    await deps.throttle.settle(gate);
    throw error;
  }
  if ("failure" in checked) {
    let lockout: boolean;
    try {
      lockout = await deps.throttle.fail(checked.failure.keys, now);
    } finally {
      await deps.throttle.settle(gate);
    }
    throw await refusal(deps, attempt, { ...checked.failure, lockout });
  }
  const { client } = checked;
  // A remembered client's failures are cleared only once its write has re-checked it (rememberedClientConfirmed).
  await deps.throttle.settle(gate, client.remembered ? undefined : { reset: [clientKey(client.clientId, ctx.clientIp)] });
  return client;
}

/** The outcome of a secret check: the client it authenticates, or the failure to count. */
type Checked = { client: TokenClient } | { failure: Failure };

/** Checks the presented secret against the client: the remembered row when it matches, else a fresh one. */
async function checkSecret(
  deps: Deps,
  attempt: {
    presented: Presented;
    clientId: string;
    remembered: TokenClient | undefined;
    registered: TokenClient | undefined;
    ip: string;
  },
): Promise<Checked> {
  const { presented, clientId, remembered, registered, ip } = attempt;
  const digest = presented.secret === undefined ? undefined : await deps.digest(presented.secret);
  const client = remembered && digest !== undefined && constantTimeEqual(digest, remembered.secretHash)
    ? remembered
    : remembered ? await deps.store.clients.findForTokenRequest(clientId) : registered;
  return judged(client, { clientId, digest, ip });
}

/** The outcome of presenting `digest` (none: no secret) for `clientId`, whose row is `client` (none: unknown). */
function judged(client: TokenClient | undefined, presented: { clientId: string; digest: string | undefined; ip: string }): Checked {
  const { clientId, digest, ip } = presented;
  // Every failure counts against the address too, so a spray that mixes in registered ids still fills it.
  const keys = client ? [clientKey(client.clientId, ip), addressKey(ip)] : [addressKey(ip)];
  const recorded = recordedClientId(clientId, client);
  if (digest === undefined) return { failure: { keys, reason: "missing_secret", clientId: recorded } };
  const matches = constantTimeEqual(digest, client?.secretHash ?? DUMMY_DIGEST);
  if (!client || !matches) return { failure: { keys, reason: client ? "bad_secret" : "unknown_client", clientId: recorded } };
  // Checked after the secret so a disabled client answers exactly like a wrong secret.
  if (client.disabled) return { failure: { keys, reason: "client_disabled", clientId: client.clientId } };
  return { client };
}

/**
 * authenticateClient where the throttle's counts live in a store of round trips: the digest first, then the lookup,
 * the check and its count in one step (Throttle.checkClient), with no pending attempt to release after it. The
 * refusal it counted is then described as judged() describes it.
 */
async function checkedInStore(
  deps: Deps,
  checkClient: NonNullable<Deps["throttle"]["checkClient"]>,
  { presented, clientId, attempt }: { presented: Presented; clientId: string; attempt: Attempt },
): Promise<TokenClient> {
  const digest = presented.secret === undefined ? undefined : await deps.digest(presented.secret);
  const { ip, now } = attempt;
  const checked = await checkClient({ clientId, digest, keys: { registered: clientKey(clientId, ip), unknown: addressKey(ip) } }, now);
  if (checked.outcome === "refused") throw tooManyRequests(checked.wait);
  if (checked.outcome === "authenticated" && checked.client) return checked.client;
  const judgement = judged(checked.client, { clientId, digest, ip });
  // The store counted a failure; its reason is the one judged() finds (bad_secret should the two ever disagree).
  const failure = "failure" in judgement
    ? judgement.failure
    : { keys: [clientKey(clientId, ip), addressKey(ip)], reason: "bad_secret", clientId };
  throw await refusal(deps, attempt, { ...failure, lockout: checked.outcome === "failed" && checked.lockout });
}
