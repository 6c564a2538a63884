// The collaborators every part of the app receives: clock, randomness, logging, hashing, and the interfaces of
// the throttles, the work limit and the metrics that http/ implements.
import type { Config } from "./config.ts";
import type { ClientCheck, Store } from "./store/contract.ts";

/** Current time as epoch milliseconds; injected so tests can move time without sleeping. */
export type Clock = () => number;

/** Fills and returns `n` cryptographically random bytes; injected so tests can be deterministic. */
export type Random = (n: number) => Uint8Array;

/** Structured log sink: one event name plus flat fields. Never pass secrets, tokens or bodies. */
export type Log = (event: string, fields?: Record<string, unknown>) => void;

/** SHA-256 of a UTF-8 string as lowercase hex; the default is crypto.subtle, an adapter may inject a faster one. */
export type Digest = (value: string) => Promise<string>;

/**
 * The base64url HMAC-SHA256 of `message` keyed by the UTF-8 bytes of `key` (CSRF tokens, device cookies); the default
 * is crypto.subtle, an adapter may inject one that no password derivation can hold up.
 */
export type Hmac = (key: string, message: string) => Promise<string>;

/**
 * AES-256 under one key applied to each 16-byte block on its own (ECB, no padding): a keyed permutation of blocks.
 * Both take and return any whole number of blocks, so a page of ids costs one call.
 */
export interface BlockCipher {
  encrypt(blocks: Uint8Array): Promise<Uint8Array>;
  decrypt(blocks: Uint8Array): Promise<Uint8Array>;
}

/** Makes a BlockCipher for a 256-bit key; the default is Web Crypto, an adapter may inject a faster one. */
export type BlockCipherFactory = (key: Uint8Array) => Promise<BlockCipher>;

/** What a text response is made of besides its text: a status and the app's own header fields. */
export interface TextInit {
  status: number;
  headers: Readonly<Record<string, string>>;
}

/**
 * Makes the Response for a text the app built (JSON answers). The default is the standard Response; a server adapter
 * that writes the text itself may inject a lighter one, which only it reads (the Node adapter does).
 */
export type TextResponse = (text: string, init: TextInit) => Response;

/** The app's text answers, each made through its TextResponse; the implementation is http/respond.ts. */
export interface Responders {
  /** `text` as it is, with `init`'s status and headers (which name its media type). */
  text(text: string, init: TextInit): Response;
  /** A JSON response; `headers` add to or override the defaults. */
  json(body: unknown, status?: number, headers?: Record<string, string>): Response;
  /** A JSON response that must never be cached (tokens, introspection, errors of the token endpoint). */
  jsonNoStore(body: unknown, status?: number, headers?: Record<string, string>): Response;
}

/** PBKDF2-HMAC-SHA256 of a password, 256 bits; injected so tests can count the iterations a sign-in spends. */
export type Pbkdf2 = (password: string, salt: Uint8Array, iterations: number) => Promise<Uint8Array>;

/**
 * Checks a password against an imported bcrypt digest; false for a digest fieldgate will not verify. The default is
 * bcryptjs on the calling thread; an adapter may inject one that runs where it cannot hold up the event loop.
 */
export type Bcrypt = (password: string, digest: string) => Promise<boolean>;

/** A Bcrypt with threads of its own, which close() ends; an App closes the one it was given. */
export interface BcryptService {
  verify: Bcrypt;
  close(): Promise<void>;
}

/** The built-in demo client's credentials, kept server-side; present only in demo mode. */
export interface DemoCredentials {
  clientId: string;
  clientSecret: string;
}

/** One counter the throttle keeps, e.g. "client:<id>|ip:<addr>". */
export interface ThrottleKey {
  id: string;
  /**
   * True for a key that many honest callers may share, such as a bare address (NAT, a proxy without
   * FIELDGATE_TRUST_PROXY). It tolerates SHARED_KEY_FACTOR (http/throttle.ts) times more failures, so one misconfigured client
   * does not lock its neighbours out while a real flood from that address is still stopped.
   */
  shared?: boolean;
}

/**
 * Failure counting per key, kept in the store (app/shared_throttle.ts over store.throttles), so every instance on one
 * database spends one budget. Each operation is one atomic step of the store.
 */
export interface Throttle {
  /** Seconds to wait before any of `keys` may try again; 0 when all are allowed. */
  retryAfter(keys: readonly ThrottleKey[], now: number): Promise<number>;
  /** Records one failure against every key; true when it brought a key to its limit (a lockout starts now). */
  fail(keys: readonly ThrottleKey[], now: number): Promise<boolean>;
  /**
   * Counts an attempt as a failure against `counted` before its outcome is known, unless one of `checked` is locked
   * out: then nothing is counted and `wait` says for how long. Checking and counting are one step, so guesses sent in
   * parallel cannot all pass the check before the first is counted; one that turns out well is taken back (forgive,
   * reset). `lockout` is true when this count brought a key to its limit.
   */
  charge(keys: { checked: readonly ThrottleKey[]; counted: readonly ThrottleKey[] }, now: number): Promise<{ wait: number; lockout: boolean }>;
  /** Takes back one failure from each key: an attempt counted before its outcome was known turned out well. */
  forgive(keys: readonly ThrottleKey[]): Promise<void>;
  /** Forgets the failures of these keys (after a success). */
  reset(keys: readonly ThrottleKey[]): Promise<void>;
  /**
   * Client authentication in one step of the store (ThrottleStore.authenticateClient): the client looked up,
   * `digest` checked against its secret and the outcome counted, gated by `registered` when the client exists and
   * `unknown` otherwise, every failure also counting against `unknown`; `fromMemory` as ClientAttempt's.
   */
  authenticateClient(
    attempt: {
      clientId: string;
      digest: string | undefined;
      keys: { registered: ThrottleKey; unknown: ThrottleKey };
      fromMemory?: boolean;
    },
    now: number,
  ): Promise<ClientCheck>;
  /** How many keys are tracked; for tests and metrics. */
  size(): Promise<number>;
}

/** Whom a task of a WorkLimit is for, so that no one party can take every waiting place. */
export interface WorkOptions {
  /**
   * Who asks, e.g. an address bucket and a username: each key may hold only a small share of the waiting places
   * (within its class, see `priority`). A task without keys counts under one key shared by all such tasks.
   */
  keys?: readonly string[];
  /** Served ahead of tasks without it, and may wait in the places kept for it (a browser that signed in before). */
  priority?: boolean;
}

/** A bound on concurrent expensive work; the implementation is http/work_limit.ts. */
export interface WorkLimit {
  /**
   * Runs `task` once one of the running places is free: priority tasks first, each class in arrival order.
   * Undefined at once, with nothing started or queued, when no place may be taken (all taken, or its keys' shares):
   * the caller answers "busy, retry" rather than holding a request open behind work it cannot reach in reasonable time.
   */
  run<T>(task: () => Promise<T>, options?: WorkOptions): Promise<T> | undefined;
  /** Tasks running and waiting now; for tests and metrics. */
  load(): { running: number; waiting: number };
}

/** Prometheus counters and histograms of one app; the implementation is http/metrics.ts. */
export interface Metrics {
  /** Counts one finished request and its latency under its route path (or "unmatched"); odd methods count as "other". */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** An access token was issued by `grant` (authorization_code, refresh_token, client_credentials). */
  tokenIssued(grant: string): void;
  /** A refresh token was rotated for a new pair. */
  tokenRefreshed(grant: string): void;
  /** A token was revoked at /oauth/revoke; `kind` is access or refresh (a refresh token takes its family). */
  tokenRevoked(kind: string): void;
  /** A replayed refresh token or authorization code was detected and its family revoked. */
  reuseDetected(kind: string): void;
  /** Maps one audit event onto the counters above; the single hook the OAuth code needs. */
  recordAuditEvent(event: string, detail: Record<string, unknown> | null | undefined): void;
  /** A request was answered 503 for a store condition, named by its log event (database_busy, …). */
  storeFailure(event: string): void;
  /** The whole registry in Prometheus text format. */
  render(): string;
}

/** Everything createApp needs; only adapters and test helpers build one. */
export interface Deps {
  config: Config;
  store: Store;
  clock: Clock;
  random: Random;
  log: Log;
  digest: Digest;
  hmac: Hmac;
  /** The AES block cipher behind GraphQL's opaque ids, keyed once per app. */
  blockCipher: BlockCipherFactory;
  /** The password hashing function sign-in verifies with (crypto.subtle; tests wrap it to count iterations). */
  pbkdf2: Pbkdf2;
  /** The bcrypt check of an imported password digest, run inside `passwordWork` like a derivation. */
  bcrypt: Bcrypt;
  /** Failed client authentications and sign-ins, keyed e.g. "client:<id>|ip:<addr>" or "ip:<addr>". */
  throttle: Throttle;
  /**
   * Successful sign-ins per user and per address inside a window; a Throttle whose `fail` records a success here,
   * since each one leaves a session row and an audit row.
   */
  successfulSignIns: Throttle;
  /** Admission to PBKDF2 derivations, so password checks cannot take every core (and Node's crypto pool) at once. */
  passwordWork: WorkLimit;
  /** Prometheus counters and histograms for this app instance (GET /metrics). */
  metrics: Metrics;
  /** Builds the app's JSON answers (http/respond.ts createResponders over AppOptions.textResponse). */
  respond: Responders;
  /** Demo client credentials when the demo walkthrough is enabled. */
  demo: DemoCredentials | undefined;
  /**
   * The app's own fetch. Only the demo walkthrough uses it, to act as a real external client would: its token
   * requests go through the same endpoint, authentication and logging as anyone's.
   */
  selfFetch: (request: Request) => Promise<Response>;
  /** The fieldgate release serving (package.json's version), or "unknown" when the embedder did not say. */
  version: string;
  /** Server DPoP nonces (oauth/dpop_nonce.ts), keyed once per app; consulted only when Config.dpopNonce is on. */
  dpopNonces: DpopNonces;
}

/** Server-provided DPoP nonces (RFC 9449 §8): `current()` to hand out, `check()` for a proof's. */
export interface DpopNonces {
  /** The nonce of the current time step. */
  current(): Promise<string>;
  /**
   * Nothing when `nonce` is one this or another instance handed out recently enough.
   * @throws OAuthError use_dpop_nonce (400) carrying a current nonce in DPoP-Nonce when it is missing, stale or forged
   */
  check(nonce: unknown): Promise<void>;
}

/** Real clock: wall time. */
export const systemClock: Clock = () => Date.now();

/** Real randomness from Web Crypto. */
export const cryptoRandom: Random = (n) => crypto.getRandomValues(new Uint8Array(n));

/** Writes one JSON line per event to stderr through console.error, which both runtimes route to fd 2. */
export const jsonLog: Log = (event, fields = {}) => {
  console.error(JSON.stringify({ time: new Date().toISOString(), event, ...fields }));
};

/** Drops every event; for tests that do not look at the log. */
export const silentLog: Log = () => {};

/** Current time in whole epoch seconds, the unit every stored timestamp uses. */
export function nowSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
