// Settings: loadConfig(env) is the only code that reads them; it validates, freezes and names a bad variable.

/** Access-token lifetimes fixed by the service spec (§2.1, §8); not configurable on purpose. */
export const ACCESS_TOKEN_TTL_SECONDS = {
  authorization_code: 28_800,
  refresh_token: 28_800,
  client_credentials: 1_800,
} as const;

/** The window of the successful sign-in limit: Config.signInLimit counts sign-ins per minute. */
export const SIGN_IN_LIMIT_WINDOW_SECONDS = 60;

/** Longest authorization-code lifetime allowed: RFC 6749 §4.1.2 recommends at most 10 minutes. */
export const MAX_CODE_TTL_SECONDS = 600;

/**
 * Scopes the service knows, with what the consent and account pages tell the user each one gives. A description
 * names everything the scope lets the application read: `fields:read` also opens GraphQL's `viewer` (username,
 * often an e-mail address, and name) and `organizations`.
 */
export const KNOWN_SCOPES = {
  "fields:read": "Read your organizations' fields (names, crops, areas and boundaries), your username, your name " +
    "and your organizations' names",
} as const;

export type Scope = keyof typeof KNOWN_SCOPES;

export interface GraphqlLimits {
  /** Deepest selection nesting accepted. */
  maxDepth: number;
  /** Highest estimated cost (list sizes multiplied down the tree) accepted. */
  maxCost: number;
  /** Most lexical tokens a document may have. */
  maxTokens: number;
  /** Most aliases a document may use. */
  maxAliases: number;
  /** Largest page a connection returns. */
  maxPageSize: number;
  /**
   * Most bytes of boundary GeoJSON one response may read and carry. The cost model caps how many boundaries a query
   * asks for, but not how large each is: up to 10 000 positions per field (about 400 KB) pass the import.
   */
  maxBoundaryBytes: number;
}

export interface Config {
  /** SQLite file (FIELDGATE_DB); ":memory:" in tests. Unused when databaseUrl is set. */
  dbPath: string;
  /**
   * PostgreSQL database (FIELDGATE_DATABASE_URL, or a postgres:// --db): when set, the store lives there and not in
   * dbPath. Holds the password when the URL does: show it only through describePostgresUrl.
   */
  databaseUrl: string | undefined;
  /** Connections each process keeps to PostgreSQL: instances (and --workers) × this must stay below max_connections. */
  databasePool: number;
  /**
   * Named prepared statements on PostgreSQL; false behind PgBouncer before 1.21 in transaction mode, which cannot keep
   * a statement prepared on one server connection for the next transaction that lands on another.
   */
  databasePrepare: boolean;
  /**
   * Seconds to wait for the PostgreSQL server's first answer when a process opens its pool (FIELDGATE_DATABASE_CONNECT_TIMEOUT):
   * a refusal ends the command or `serve` at once, a peer that never answers as PostgreSQL after this long.
   */
  databaseConnectTimeout: number;
  port: number;
  host: string;
  /** Public base URL; also the issuer identifier (RFC 8414) and the `iss` of authorization responses. */
  baseUrl: string;
  codeTtlSeconds: number;
  /** Lifetime of each refresh token; every rotation issues a fresh one. */
  refreshTokenTtlSeconds: number;
  /** Seconds during which a just-rotated refresh token may be replayed once without tripping reuse detection. */
  refreshGraceSeconds: number;
  /** When true the refresh grant requires redirect_uri, as the spec's table lists it. */
  refreshRequiresRedirectUri: boolean;
  /** When true every authorization request must carry a PKCE S256 code_challenge. */
  requirePkce: boolean;
  pbkdf2Iterations: number;
  /**
   * Password derivations (PBKDF2) run at once per process; undefined sizes it from the cores (http/work_limit.ts,
   * defaultPasswordConcurrency), leaving one for everything else.
   */
  passwordConcurrency: number | undefined;
  /** Sign-ins that may wait for a derivation; one more is answered 503 with Retry-After at once. */
  passwordQueue: number;
  /** Successful sign-ins per user per minute (SHARED_KEY_FACTOR times that per address) before 429. */
  signInLimit: number;
  sessionTtlSeconds: number;
  /** Live sessions a user may hold; a new sign-in beyond it ends the oldest. */
  maxSessionsPerUser: number;
  /** Origins allowed to call /graphql cross-origin; empty disables CORS. */
  corsOrigins: readonly string[];
  maxBodyBytes: number;
  /** Demo mode: the landing page offers a walkthrough with the built-in demo client. */
  demo: boolean;
  /**
   * FIELDGATE_DEMO as given: "on", "off", or "auto" when unset. `serve` turns an "auto" demo on when it finds the
   * database's demo credentials file, and seeds an empty database unless it is "off".
   */
  demoSetting: "on" | "off" | "auto";
  /** Bearer secret protecting /metrics; undefined turns /metrics off. */
  metricsToken: string | undefined;
  /** How long expired codes, tokens, sessions and demo states are kept before purge. */
  retentionSeconds: number;
  /**
   * How long audit events are kept before purge; apart from retentionSeconds, and longer by default: operators
   * review the trail weeks later, and after restoring a backup they replay what `audit --since <backup time>` lists.
   */
  auditRetentionSeconds: number;
  cleanupIntervalSeconds: number;
  /** How long `serve` waits for in-flight requests at shutdown before cutting the connections still open. */
  shutdownGraceSeconds: number;
  /**
   * Take the client address from X-Forwarded-For, assuming exactly one trusted proxy hop in front of us: the
   * right-most entry (the address that proxy saw) is used, earlier entries are client-controlled and ignored.
   * Only enable behind one proxy you control that appends to the header; behind a chain of two, every client would
   * appear as the outer proxy's address.
   */
  trustProxy: boolean;
  /** Failed client authentications or sign-ins tolerated per key inside the window before 429. */
  throttleMaxFailures: number;
  throttleWindowSeconds: number;
  /**
   * Seconds a DPoP proof's `iat` may lie before or after the server's clock (RFC 9449 §11.1,
   * FIELDGATE_DPOP_WINDOW): a proof is accepted once within it, and its replay record is kept that long.
   */
  dpopWindowSeconds: number;
  /**
   * Demand server nonces in DPoP proofs (RFC 9449 §8, FIELDGATE_DPOP_NONCE): proofs can then not be made ahead of
   * time. A nonce changes every dpopWindowSeconds and is accepted for one more step.
   */
  dpopNonce: boolean;
  graphql: GraphqlLimits;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new TypeError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new RangeError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new TypeError(`${name} must be true or false, got "${raw}"`);
}

function baseUrl(env: Env, port: number): string {
  const raw = env.FIELDGATE_BASE_URL || `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`FIELDGATE_BASE_URL must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("FIELDGATE_BASE_URL must use http or https");
  }
  // The raw text, not url.search/url.hash: those are "" for a bare "?" or "#", which would still end up in href.
  if (/[?#]/.test(raw)) throw new TypeError("FIELDGATE_BASE_URL must not have a query or fragment");
  // The issuer is sent in every authorization response (iss) and published: credentials in it would leak.
  if (url.username || url.password) throw new TypeError("FIELDGATE_BASE_URL must not contain user information");
  // Every route is served from the root, and the metadata, iss and the demo's self-calls are built as base URL +
  // path: with a prefix they would all name endpoints that answer 404 (RFC 8414 §2 wants working ones).
  if (url.pathname !== "/") {
    throw new TypeError(`FIELDGATE_BASE_URL must not have a path (fieldgate serves from the root), got "${url.pathname}"`);
  }
  return url.href.replace(/\/$/, "");
}

function origins(env: Env): string[] {
  const raw = env.FIELDGATE_CORS_ORIGINS ?? "";
  return raw.split(",").map((s) => s.trim()).filter(Boolean).map((origin) => {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new TypeError(`FIELDGATE_CORS_ORIGINS has an invalid origin "${origin}"`);
    }
    if (url.origin !== origin) throw new TypeError(`FIELDGATE_CORS_ORIGINS entries must be bare origins, got "${origin}"`);
    return origin;
  });
}

/** True for a postgres:// or postgresql:// URL, which names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Checks that a database location is a PostgreSQL URL or a file path, never a URL of another scheme: a mistyped
 * `postgress://user:password@host/db` would otherwise be taken as a SQLite file, created in a directory named after
 * the URL (its password included) and served empty, one instance of a cluster running alone. The message names the
 * scheme only, never the rest, which may hold a password.
 * @throws TypeError naming `name` and the scheme for any other `scheme://` location
 */
export function checkDatabaseLocation(name: string, location: string): void {
  if (isPostgresUrl(location)) return;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(location)?.[1];
  if (scheme !== undefined) {
    throw new TypeError(
      `${name} has the unknown database URL scheme "${scheme.slice(0, 32)}:"; use postgres:// (or postgresql://) for PostgreSQL, or a file path for SQLite`,
    );
  }
}

/**
 * FIELDGATE_DATABASE_URL, checked without ever echoing it (it may carry a password); undefined when unset. Both it and
 * FIELDGATE_DB set is refused: which database the operator meant is a guess either way, and a wrong guess serves (or
 * erases users from) the other one.
 */
function databaseUrl(env: Env): string | undefined {
  const url = env.FIELDGATE_DATABASE_URL || undefined;
  if (env.FIELDGATE_DB) checkDatabaseLocation("FIELDGATE_DB", env.FIELDGATE_DB);
  if (env.FIELDGATE_DB && isPostgresUrl(env.FIELDGATE_DB)) {
    throw new TypeError("FIELDGATE_DB names a SQLite file; put a PostgreSQL URL in FIELDGATE_DATABASE_URL");
  }
  if (url === undefined) return undefined;
  if (env.FIELDGATE_DB) {
    throw new TypeError(
      "FIELDGATE_DB (a SQLite file) and FIELDGATE_DATABASE_URL (PostgreSQL) are both set; set only the one to use",
    );
  }
  checkDatabaseLocation("FIELDGATE_DATABASE_URL", url);
  if (!isPostgresUrl(url) || !URL.canParse(url)) {
    throw new TypeError("FIELDGATE_DATABASE_URL must be a postgres:// or postgresql:// URL");
  }
  return url;
}

/** Builds the frozen configuration from an environment record (process.env or Deno.env.toObject()). */
export function loadConfig(env: Env): Readonly<Config> {
  const port = integer(env, "PORT", 8080, 0, 65_535);
  const metricsToken = env.FIELDGATE_METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new RangeError("FIELDGATE_METRICS_TOKEN must be at least 16 characters");
  }
  const demoSetting = env.FIELDGATE_DEMO ? (flag(env, "FIELDGATE_DEMO", false) ? "on" : "off") : "auto";
  const config: Config = {
    dbPath: env.FIELDGATE_DB || "data/fieldgate.db",
    databaseUrl: databaseUrl(env),
    databasePool: integer(env, "FIELDGATE_DATABASE_POOL", 4, 1, 1_000),
    databasePrepare: flag(env, "FIELDGATE_DATABASE_PREPARE", true),
    databaseConnectTimeout: integer(env, "FIELDGATE_DATABASE_CONNECT_TIMEOUT", 10, 1, 120),
    port,
    host: env.HOST || "127.0.0.1",
    baseUrl: baseUrl(env, port),
    codeTtlSeconds: integer(env, "FIELDGATE_CODE_TTL", 60, 1, MAX_CODE_TTL_SECONDS),
    refreshTokenTtlSeconds: integer(env, "FIELDGATE_REFRESH_TTL", 30 * 86_400, 60, 365 * 86_400),
    refreshGraceSeconds: integer(env, "FIELDGATE_REFRESH_GRACE", 0, 0, 60),
    refreshRequiresRedirectUri: flag(env, "FIELDGATE_REFRESH_REQUIRE_REDIRECT_URI", false),
    requirePkce: flag(env, "FIELDGATE_REQUIRE_PKCE", false),
    pbkdf2Iterations: integer(env, "FIELDGATE_PBKDF2_ITERATIONS", 600_000, 1, 10_000_000),
    passwordConcurrency: env.FIELDGATE_PASSWORD_CONCURRENCY
      ? integer(env, "FIELDGATE_PASSWORD_CONCURRENCY", 1, 1, 64)
      : undefined,
    passwordQueue: integer(env, "FIELDGATE_PASSWORD_QUEUE", 4, 0, 1_000),
    signInLimit: integer(env, "FIELDGATE_SIGNIN_LIMIT", 10, 1, 10_000),
    sessionTtlSeconds: integer(env, "FIELDGATE_SESSION_TTL", 8 * 3_600, 60, 30 * 86_400),
    maxSessionsPerUser: integer(env, "FIELDGATE_MAX_SESSIONS", 10, 1, 1_000),
    corsOrigins: Object.freeze(origins(env)),
    maxBodyBytes: integer(env, "FIELDGATE_MAX_BODY_BYTES", 65_536, 1_024, 16 * 1_048_576),
    demo: demoSetting === "on",
    demoSetting,
    metricsToken,
    retentionSeconds: integer(env, "FIELDGATE_RETENTION", 7 * 86_400, 0, 3_650 * 86_400),
    auditRetentionSeconds: integer(env, "FIELDGATE_AUDIT_RETENTION", 90 * 86_400, 0, 3_650 * 86_400),
    cleanupIntervalSeconds: integer(env, "FIELDGATE_CLEANUP_INTERVAL", 300, 0, 86_400),
    shutdownGraceSeconds: integer(env, "FIELDGATE_SHUTDOWN_GRACE", 10, 1, 600),
    trustProxy: flag(env, "FIELDGATE_TRUST_PROXY", false),
    throttleMaxFailures: integer(env, "FIELDGATE_THROTTLE_MAX_FAILURES", 10, 1, 10_000),
    throttleWindowSeconds: integer(env, "FIELDGATE_THROTTLE_WINDOW", 60, 1, 86_400),
    dpopWindowSeconds: integer(env, "FIELDGATE_DPOP_WINDOW", 60, 5, 600),
    dpopNonce: flag(env, "FIELDGATE_DPOP_NONCE", false),
    graphql: Object.freeze({
      maxDepth: integer(env, "FIELDGATE_GRAPHQL_MAX_DEPTH", 10, 2, 100),
      maxCost: integer(env, "FIELDGATE_GRAPHQL_MAX_COST", 5_000, 10, 1_000_000),
      maxTokens: integer(env, "FIELDGATE_GRAPHQL_MAX_TOKENS", 2_000, 50, 100_000),
      maxAliases: integer(env, "FIELDGATE_GRAPHQL_MAX_ALIASES", 30, 0, 1_000),
      maxPageSize: 100,
      maxBoundaryBytes: integer(env, "FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES", 4_194_304, 1_024, 67_108_864),
    }),
  };
  return Object.freeze(config);
}
