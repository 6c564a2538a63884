// The store's contract: the Store interface every backend implements, each sub-interface, and every row and record
// type the layers above and both backends use. Declarations only; sqlite/ and postgres/ implement it and import
// nothing from each other, the row mappers and SQL text they share are in rows.ts, and the rules they share are in
// throttle_rules.ts, import_decisions.ts and imports.ts.

/** A result row of either backend, as the row mappers both share (rows.ts) read it. */
export type MappedRow = Readonly<Record<string, unknown>>;

/** A value a SQLite column holds. */
export type SqlValue = null | number | bigint | string | Uint8Array;

export interface PurgeCounts {
  codes: number;
  tokens: number;
  sessions: number;
  families: number;
  auditEvents: number;
  demoStates: number;
  /** DPoP proofs seen, whose iat window is over: kept no longer, as no proof they guard can be accepted again. */
  dpopProofs: number;
}

/** How long purge keeps rows past their time; Config has both fields, so a caller may pass its config. */
export interface Retention {
  /** Seconds expired codes, tokens, sessions, grant families and demo states are kept. */
  retentionSeconds: number;
  /** Seconds audit events are kept: a trail needs far longer than expired credentials do. */
  auditRetentionSeconds: number;
}

/**
 * Maintenance only a SQLite file has: a PostgreSQL server checks, backs up and checkpoints itself (pg_dump,
 * autovacuum), so its store has none and callers skip what this offers.
 */
export interface SqliteMaintenance {
  /** Runs PRAGMA integrity_check; ["ok"] when the file is sound, otherwise SQLite's list of problems. */
  integrityCheck(): Promise<string[]>;
  /**
   * Writes a consistent, compacted copy of the database to `path` (VACUUM INTO: one read transaction, so a server
   * can go on serving and writing meanwhile). The file must not exist yet, or be empty (the
   * CLI creates it first, exclusively and private).
   * @throws Error from SQLite when the file exists or cannot be written
   */
  backupTo(path: string): Promise<void>;
  /**
   * Takes a WAL checkpoint off the request path and starts the WAL over (Db RESTART: writers wait only for the
   * frames written while it copied), so the WAL stays bounded under a steady write load. Not complete while another
   * connection keeps the WAL in use (a long read transaction): then it gives up at once instead of stalling writers.
   */
  checkpoint(): Promise<CheckpointOutcome>;
  /**
   * Checkpoints everything and empties the -wal file, on this connection (Db TRUNCATE), waiting up to the busy
   * timeout for other connections' writes and reads. For the CLI after an erasure: secure_delete zeroes what was
   * deleted in the main file, but the WAL keeps the older copies of those pages until writes overwrite them.
   * Not complete while another connection keeps reading an older snapshot.
   */
  truncateWal(): Promise<CheckpointOutcome>;
}

/**
 * What a store has asked of its database server since it opened, for /metrics: a round trip is one wait for the
 * server, so round trips per request is what a request pays in network latency, whatever its CPU cost.
 */
export interface StoreStats {
  roundTrips: number;
  statements: number;
}

/** Every domain operation, each one atomic in whichever database holds it. */
export interface Store {
  organizations: OrganizationStore;
  users: UserStore;
  clients: ClientStore;
  codes: CodeStore;
  tokens: TokenStore;
  sessions: SessionStore;
  consents: ConsentStore;
  fields: FieldStore;
  audit: AuditStore;
  demoStates: DemoStateStore;
  secrets: SecretStore;
  imports: ImportStore;
  /**
   * Throttle counters shared by every instance on this database, and client authentication counted there; purged by
   * `throttles.purgeExpired`.
   */
  throttles: ThrottleStore;
  /**
   * Present on a SQLite store only. Tested for by server/maintenance.ts (checkpoint timer), cli/erasure.ts (WAL
   * truncation after an erasure) and cli/commands/backup.ts.
   */
  maintenance?: SqliteMaintenance;
  /**
   * Present on a store over a database server (PostgreSQL); an in-process SQLite file has no round trips. Tested for
   * by app/metrics_route.ts.
   */
  stats?(): StoreStats;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /**
   * Deletes codes, tokens, sessions and demo states that expired more than `retentionSeconds` before `now`, and
   * audit events older than `auditRetentionSeconds`.
   */
  purge(now: number, retention: Retention): Promise<PurgeCounts>;
  close(): Promise<void>;
}

/** The store over a SQLite file, with the maintenance only a file needs. */
export interface SqliteStore extends Store {
  maintenance: SqliteMaintenance;
}

// --- audit_events table: security events (token issued, reuse detected, sign-in failed, …) kept for review.
export interface AuditEvent {
  id: number;
  at: number;
  event: string;
  clientId: string | null;
  userId: number | null;
  ip: string | null;
  /** Extra non-secret facts, e.g. grant type or reason. */
  detail: Record<string, unknown> | null;
}

export type NewAuditEvent = Omit<AuditEvent, "id">;

export interface AuditStore {
  insert(event: NewAuditEvent): Promise<void>;
  /**
   * At most `limit` events, oldest first: the first ones at or after `since` (epoch seconds), or without `since`
   * the latest ones, as `tail` shows the end of a log. `userId` and `clientId` keep one user's or one client's
   * events only (what someone asking what happened to their account needs).
   */
  list(options: { since?: number; limit?: number; userId?: number; clientId?: string }): Promise<AuditEvent[]>;
}

// --- organizations and memberships tables.
export interface Organization {
  id: number;
  slug: string;
  name: string;
  createdAt: number;
}

export interface OrganizationStore {
  findById(id: number): Promise<Organization | undefined>;
  findBySlug(slug: string): Promise<Organization | undefined>;
  /** Returns the organization with this slug, creating it (named `name`, default the slug) when missing. */
  ensure(slug: string, options: { name?: string; now: number }): Promise<Organization>;
  list(): Promise<Organization[]>;
  /** Organizations the user belongs to, by id. */
  listForUser(userId: number): Promise<Organization[]>;
  /** The organizations with these ids, by id; an id without an organization is left out. */
  listByIds(ids: readonly number[]): Promise<Organization[]>;
  /** Ids of the organizations the user belongs to; the scoping key for every data query. */
  idsForUser(userId: number): Promise<number[]>;
  /** Adds (or keeps) the user's membership in the organization. */
  addMember(organizationId: number, userId: number, options: { role?: string; now: number }): Promise<void>;
  /**
   * Makes the user a member of `slug`, creating the organization (named the slug) when missing, in one transaction.
   * `joined` is false when they already were a member.
   */
  join(userId: number, slug: string, now: number): Promise<{ organization: Organization; joined: boolean; created: boolean }>;
  /**
   * Ends the user's membership; false when there was none. Every bearer check reads memberships afresh, so their
   * tokens stop reading the organization's data at once.
   */
  removeMember(organizationId: number, userId: number): Promise<boolean>;
}

// --- users table: platform users (with a password hash) and integration users (never sign in).
export type UserKind = "person" | "integration";

export interface User {
  id: number;
  username: string;
  name: string | null;
  kind: UserKind;
  passwordHash: string | null;
  disabled: boolean;
  createdAt: number;
}

/** When given, every token and grant family of the user is revoked as well, at that time (epoch seconds). */
export interface RevokeOptions {
  revokeTokensAt?: number;
}

/** What an account change ended. */
export interface AccessEnded {
  sessionsEnded: number;
  tokensRevoked: number;
}

/** What erasing a user removed; or why nothing was: gone already, or the integration user of a client. */
export type EraseOutcome =
  | { status: "erased"; sessionsEnded: number; tokensRevoked: number; memberships: number; consents: number; auditEventsAnonymized: number }
  | { status: "missing" }
  | { status: "client_integration_user"; clientId: string };

export interface NewUser {
  username: string;
  name?: string | null;
  kind: UserKind;
  passwordHash?: string | null;
  now: number;
}

export interface UserStore {
  /** @throws StoreConflictError when the username is taken (case-insensitively). */
  insert(user: NewUser): Promise<User>;
  /**
   * Inserts the user as a member of the organization `slug`, creating that organization (named `organizationName`,
   * default the slug) if it is missing; all or nothing, so a taken username leaves no new organization behind.
   * @throws StoreConflictError when the username is taken (case-insensitively).
   */
  insertMember(user: NewUser, slug: string, organizationName?: string): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  findByUsername(username: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  /**
   * Re-hashes a password (a stronger hash at sign-in) if the stored hash is still `replacing`, the one just
   * verified; false when it changed meanwhile (a new password must not be overwritten). Sessions stay.
   */
  updatePasswordHash(id: number, passwordHash: string, options: { replacing: string }): Promise<boolean>;
  /**
   * Sets a person's new password and ends every sign-in session of theirs, in one transaction: whoever knew the old
   * password is signed out. With `revokeTokensAt`, every token and grant family of the user is revoked in it too.
   */
  replacePassword(id: number, passwordHash: string, options?: RevokeOptions): Promise<AccessEnded>;
  /**
   * Disables or enables the user. Disabling ends their sessions in the same transaction; their tokens are refused
   * while disabled (every token check joins the user) and work again if enabled before they expire, unless
   * `revokeTokensAt` revoked them (and their grant families) in the same transaction.
   */
  setDisabled(id: number, disabled: boolean, options?: RevokeOptions): Promise<AccessEnded>;
  /**
   * Erases a user in one transaction: their tokens, codes, grant families, remembered approvals, sessions and
   * memberships are deleted, their audit events lose the client address, and the row becomes an anonymous, disabled
   * tombstone without username, name or password, so its id is never reused. `findByUsername` and `list` no longer
   * see it and the username is free again. An integration user that a client acts as is refused: it goes with its
   * client, and erasing it would leave the client acting as nobody.
   */
  erase(id: number, now: number): Promise<EraseOutcome>;
}

// --- clients table: registered applications, their secret digest, grant type, redirect URIs and scope.
export type ClientGrantType = "authorization_code" | "client_credentials";

export interface Client {
  /** Internal row id; foreign keys point here. */
  id: number;
  /** Public OAuth client_id. */
  clientId: string;
  /** SHA-256 hex of the client secret. */
  secretHash: string;
  name: string;
  /**
   * The one grant the client may use; null for a resource server (RFC 7662 §2.1's protected resource), which obtains
   * no token and may introspect every token.
   */
  grantType: ClientGrantType | null;
  /** The first registered redirect URI (what pages and the demo show); null for client_credentials clients. */
  redirectUri: string | null;
  /** Every registered redirect URI, in registration order; empty for client_credentials clients. */
  redirectUris: readonly string[];
  /** Space-separated registered scope. */
  scope: string;
  integrationUserId: number | null;
  disabled: boolean;
  createdAt: number;
  secretRotatedAt: number | null;
  /** Token requests must carry a DPoP proof (RFC 9449 §5.2, dpop_bound_access_tokens). */
  requireDpop: boolean;
}

/**
 * The client as client authentication (ThrottleStore.authenticateClient) reads it for the token, revocation and
 * introspection endpoints: only the columns they use, plus whether its integration user may act, so
 * client_credentials issuance needs no second read.
 */
export type TokenClient = Pick<
  Client,
  "id" | "clientId" | "secretHash" | "grantType" | "redirectUri" | "redirectUris" | "scope" | "integrationUserId" | "disabled"
  | "requireDpop"
> & {
  /** True only when the integration user exists and is not disabled; false for clients without one. */
  integrationUserEnabled: boolean;
  /**
   * Set only when authenticateClient answered from the row this store read last (ClientAttempt.fromMemory), without
   * reading the gate: the issuance re-checks the row as usual and also finds the gate's counter (`gate`, a stored
   * key; null: none) without failures, or refuses as client_changed. Any refusal of a request answered this way is
   * decided again on a fresh read.
   */
  remembered?: { gate: string | null };
};

/** A client to register: its attributes without the row id and the flags and times the store sets. */
export type NewClient = Omit<Client, "id" | "disabled" | "createdAt" | "secretRotatedAt" | "redirectUri" | "requireDpop"> & {
  now: number;
  /** False unless given. */
  requireDpop?: boolean;
};

export interface ClientStore {
  /**
   * @throws StoreConflictError when the client_id exists, or when the integration user already belongs to a
   * client: the service spec gives each client-credentials application a dedicated integration user.
   */
  insert(client: NewClient): Promise<Client>;
  findByClientId(clientId: string): Promise<Client | undefined>;
  findById(id: number): Promise<Client | undefined>;
  list(): Promise<Client[]>;
  /**
   * Replaces the secret digest at once; with `revokeTokens` also revokes every live token and grant family of
   * the client in the same transaction. Returns the updated client, or undefined when unknown.
   */
  rotateSecret(clientId: string, options: { secretHash: string; now: number; revokeTokens: boolean }): Promise<Client | undefined>;
  /**
   * Points an authorization-code client at `redirectUri` alone, in one transaction; returns the URIs it had before,
   * or undefined when there is no such authorization-code client. Done automatically for fieldgate's own demo client
   * only; any other client's URI changes when an operator runs `clients set-redirect-uri` for its owner.
   */
  replaceRedirectUri(clientId: string, redirectUri: string): Promise<readonly string[] | undefined>;
  /** Makes a client's token requests need a DPoP proof, or not; the updated client, or undefined when unknown. */
  setRequireDpop(clientId: string, required: boolean): Promise<Client | undefined>;
  /** Disables (or re-enables) a client; a disabled client's tokens stop being accepted. */
  setDisabled(clientId: string, disabled: boolean): Promise<Client | undefined>;
  /**
   * Deletes the client and, through the schema's cascades, its tokens, codes, grant families and the approvals users
   * gave it, in one transaction; undefined when there is no such client. Its integration user stays (a user of its
   * own, which `users delete` can then erase). Counts what was still live.
   */
  remove(clientId: string, now: number): Promise<{ client: Client; tokensRevoked: number; consentsRemoved: number } | undefined>;
}

// --- authorization_codes table (and the grant family each approval opens): issue once, consume once.
export interface AuthorizationCode {
  id: number;
  familyId: string;
  /** Internal client row id. */
  clientId: number;
  userId: number;
  redirectUri: string;
  scope: string;
  codeChallenge: string | null;
  codeChallengeMethod: "S256" | null;
  issuedAt: number;
  expiresAt: number;
  usedAt: number | null;
  /** The key thumbprint the request named in dpop_jkt (RFC 9449 §10), which the exchange must prove; null if none. */
  dpopJkt: string | null;
}

/** A code to store: its digest plus the approved request; the method is always S256 when a challenge is set. */
export type NewAuthorizationCode = Omit<AuthorizationCode, "id" | "codeChallengeMethod" | "usedAt" | "dpopJkt"> & {
  codeHash: string;
  /** Null unless given. */
  dpopJkt?: string | null;
};

export type ConsumeResult =
  | { status: "ok"; code: AuthorizationCode }
  /** The code had been used before; its whole grant family has now been revoked (RFC 6749 §4.1.2). */
  | { status: "reused"; code: AuthorizationCode }
  | { status: "missing" };

export interface CodeStore {
  /**
   * Opens a grant family for the approval and stores the code's digest, in one transaction. With a `basis`, only
   * while it still holds (a password change, a disable or a withdrawn consent that committed while the request
   * was in flight stops the code; still_authorized.ts), and a consent given just now is stored with the code.
   * @returns false when the basis no longer held and nothing was stored
   */
  issue(code: NewAuthorizationCode, basis?: CodeBasis): Promise<boolean>;
}

// --- consents table: which user approved which client for which scope, so consent can be remembered.
export interface Consent {
  /** Internal client row id. */
  clientId: number;
  clientPublicId: string;
  clientName: string;
  scope: string;
  grantedAt: number;
}

export interface ConsentStore {
  find(userId: number, clientId: number): Promise<Consent | undefined>;
  /** Records (or replaces) the user's consent to the client for `scope`. */
  grant(userId: number, clientId: number, options: { scope: string; now: number }): Promise<void>;
  listForUser(userId: number): Promise<Consent[]>;
}

// --- sessions table: browser sign-in sessions, stored by the digest of the cookie value.
export interface Session {
  id: number;
  userId: number;
  createdAt: number;
  expiresAt: number;
}

export interface NewSession {
  sessionHash: string;
  userId: number;
  createdAt: number;
  expiresAt: number;
}

export interface SessionStore {
  insert(session: NewSession): Promise<void>;
  /**
   * Sign-in: inserts `session` and deletes the one hashed `oldHash` (if given), in one transaction, provided the
   * user is enabled and their stored password hash is still `passwordHash`, the one just verified. An admin may
   * set a new password or disable the user while the (slow) check runs; then nothing is written and it is false.
   * The user's live sessions beyond the newest `maxSessions` end in the same transaction, oldest first.
   */
  replace(oldHash: string | undefined, session: NewSession, options: { passwordHash: string; maxSessions: number }): Promise<boolean>;
  /** The session if unexpired and its user is enabled. */
  findActive(sessionHash: string, now: number): Promise<Session | undefined>;
  delete(sessionHash: string): Promise<void>;
  /** How many unexpired sessions the user has besides the one hashed `sessionHash`. */
  countOthers(userId: number, sessionHash: string, now: number): Promise<number>;
  /** Ends every session of the user but the one hashed `sessionHash`; returns how many (expired ones included). */
  endOthers(userId: number, sessionHash: string): Promise<number>;
}

// --- fields table: farm fields per organization with GeoJSON boundaries; every read is scoped to organization ids.
/**
 * A field as pages and lookups return it. The boundary can be hundreds of kilobytes, so it is read only when the
 * caller passes a BoundaryBudget, and only as far as the budget goes: a query selecting only ids over nested pages
 * (4,600 rows within the GraphQL cost limit) otherwise held every boundary of every row in memory.
 */
export interface Field {
  id: number;
  organizationId: number;
  name: string;
  areaHa: number;
  crop: string | null;
  season: string | null;
  /** GeoJSON Polygon or MultiPolygon geometry as JSON text; absent when not asked for or past the budget. */
  boundary?: string;
  centroid: { lon: number; lat: number };
  createdAt: number;
  updatedAt: number;
}

/** A field to insert: the stored attributes without the ids and timestamps the store assigns. */
export interface NewField extends Omit<Field, "id" | "organizationId" | "createdAt" | "updatedAt" | "boundary"> {
  boundary: string;
}

/**
 * How many bytes of boundary text a read may still take. Asked once per row in id order before its text is read:
 * a refused row and every later one of that read come back without a boundary.
 */
export interface BoundaryBudget {
  take(bytes: number): boolean;
}

/** A page: the fields after `afterId` in id order, at most `limit` of them. */
export interface PageOptions {
  afterId: number;
  limit: number;
}

/**
 * Organization ids, ascending. The bearer check's (ActiveAccess.organizationIds) may carry `fieldTotal`, the field
 * total over exactly these ids read in the same statement (PostgreSQL's check reads it); `count` then answers an
 * unfiltered count over this very value without reading. Hand the check's value on as it is: a copy is a plain
 * array and is counted afresh.
 */
export type OrganizationIds = readonly number[] & { readonly fieldTotal?: number };

/** Which fields a query may see: always restricted to `organizationIds` (the acting user's memberships). */
export interface FieldFilter {
  organizationIds: OrganizationIds;
  crop?: string;
  season?: string;
}

export interface FieldStore {
  /**
   * Inserts all fields into the organization in one transaction: all or nothing. With `replace`, the organization's
   * existing fields are deleted in the same transaction (a re-import of an updated file). Returns the counts.
   */
  insertMany(
    organizationId: number,
    fields: readonly NewField[],
    options: { now: number; replace?: boolean },
  ): Promise<{ inserted: number; removed: number }>;
  /** How many fields the filter matches. */
  count(filter: FieldFilter): Promise<number>;
  /** Fields with id > afterId in id order, at most `limit`; with `boundaries`, their boundaries as far as it goes. */
  page(filter: FieldFilter, options: PageOptions, boundaries?: BoundaryBudget): Promise<Field[]>;
  /** `count` and `page` read in one snapshot, so the total and the rows describe the same moment. */
  countAndPage(filter: FieldFilter, options: PageOptions, boundaries?: BoundaryBudget): Promise<{ total: number; rows: Field[] }>;
  /** The field if it belongs to one of `organizationIds`; with `boundaries`, its boundary if the budget allows. */
  findById(id: number, organizationIds: readonly number[], boundaries?: BoundaryBudget): Promise<Field | undefined>;
}

// --- tokens table: access and refresh token digests, their lifetimes, revocation and refresh rotation.
/** A live access token as the bearer check returns it: its details plus the acting user's organization ids. */
export interface ActiveAccess extends TokenDetails {
  /** Ids of the organizations the acting user belongs to, ascending; read in the same query as the token. */
  readonly organizationIds: OrganizationIds;
}

export interface IssueInput {
  clientId: number;
  userId: number;
  /** The grant family (approval) the tokens descend from; null for client credentials. */
  familyId: string | null;
  tokens: NewToken[];
  /** An audit row written in the same transaction: one commit per issuance instead of two, and never a token without its row. */
  audit?: NewAuditEvent;
  /**
   * The client as it authenticated. When given, the tokens are inserted only if, inside the transaction, it still
   * has that secret and is enabled and the user is enabled: a `clients rotate-secret --revoke-tokens` or
   * `users disable` that commits while the request is in flight would otherwise miss them (still_authorized.ts).
   * A remembered client (TokenClient.remembered) also needs its gate without failures.
   */
  authenticated?: AuthenticatedClient;
}

/** What issue() did: inserted the tokens, or nothing, and why. */
export type IssueOutcome = "issued" | "family_revoked" | Withdrawn;

/** A grant's verdict on a consumed code: issue the plan's tokens, or refuse for a reason the result carries back. */
export type CodeDecision<P extends IssuePlan, R> = { issue: P } | { refuse: R };

export type ExchangeResult<P extends IssuePlan = IssuePlan, R = unknown> =
  | { status: "issued"; code: AuthorizationCode; plan: P }
  /** `decide` refused; the code is used up all the same. */
  | { status: "refused"; code: AuthorizationCode; reason: R }
  /** The approval's family had been revoked (a replay of the code, a user revoking access): nothing was issued. */
  | { status: "family_revoked"; code: AuthorizationCode }
  | Exclude<ConsumeResult, { status: "ok" }>;

/** What the code exchange learns inside its transaction, for checks that need the database. */
export interface ExchangeFacts {
  userDisabled: boolean;
  /** The client's secret was rotated, or the client disabled, since it authenticated for this exchange. */
  clientChanged: boolean;
}

export type RevokeResult = { status: "revoked" | "unknown"; kind?: TokenKind } | { status: "other_client" };

export interface TokenStore {
  /**
   * Inserts the tokens in one transaction. Inserts nothing when the family has been revoked meanwhile (e.g. by a
   * replay of the code racing the first exchange), or when `authenticated` no longer holds.
   */
  issue(input: IssueInput): Promise<IssueOutcome>;
  /**
   * Consumes an authorization code and inserts the tokens `decide` plans for it, in one transaction: of two
   * concurrent exchanges exactly one is issued tokens, and a replay revokes them (RFC 6749 §4.1.2). The code is
   * used up even when `decide` refuses. Another client's code is "missing": untouched. `decide` runs inside the
   * transaction, on the rows it read; a PostgreSQL transaction run again (a deadlock victim) calls it again.
   */
  exchangeCode<P extends IssuePlan, R>(
    codeHash: string,
    client: AuthenticatedClient,
    now: number,
    decide: (code: AuthorizationCode, facts: ExchangeFacts) => CodeDecision<P, R>,
  ): Promise<ExchangeResult<P, R>>;
  /** Any token by digest, live or not, with its client and user. */
  findByHash(tokenHash: string): Promise<TokenDetails | undefined>;
  /** The access token if it is unexpired, unrevoked, and its client and user are enabled; the bearer check. */
  findActiveAccess(tokenHash: string, now: number): Promise<ActiveAccess | undefined>;
  /** Refresh-token rotation as one transaction: single-use, reuse detection, optional grace period. */
  rotateRefresh<P extends IssuePlan>(input: RotateInput<P>): Promise<RotateResult<P>>;
  /**
   * Revokes a token presented by client `clientId`: an access token alone, a refresh token with its whole family
   * (RFC 7009 §2.1). Unknown or already dead tokens report "unknown"; another client's are left alone.
   */
  revoke(tokenHash: string, clientId: number, now: number): Promise<RevokeResult>;
  /** Revokes every family and token the user granted to the client (the "revoke access" button). */
  revokeUserClient(userId: number, clientId: number, now: number): Promise<number>;
  /** Counts tokens (all states); for metrics and tests. */
  count(): Promise<number>;
}

// --- Token rows: what issuance writes and lookups return.
export type TokenKind = "access" | "refresh";
export type TokenGrantType = "authorization_code" | "refresh_token" | "client_credentials";

export interface TokenRecord {
  id: number;
  kind: TokenKind;
  grantType: TokenGrantType;
  familyId: string | null;
  /** Internal client row id. */
  clientId: number;
  userId: number;
  scope: string;
  issuedAt: number;
  expiresAt: number;
  revokedAt: number | null;
  rotatedAt: number | null;
  /** RFC 7638 thumbprint of the key a DPoP-bound access token is bound to (RFC 9449 §6); null for a Bearer token. */
  dpopJkt: string | null;
}

/** A token joined with what introspection, token info and bearer checks need to know about it. */
export interface TokenDetails extends TokenRecord {
  /** Public OAuth client_id. */
  clientPublicId: string;
  clientName: string;
  clientDisabled: boolean;
  username: string;
  userKind: "person" | "integration";
  userDisabled: boolean;
}

export interface NewToken {
  tokenHash: string;
  kind: TokenKind;
  grantType: TokenGrantType;
  scope: string;
  issuedAt: number;
  expiresAt: number;
  /** The DPoP key thumbprint an access token is bound to; absent for a Bearer token. */
  dpopJkt?: string;
}

/** Whom new tokens belong to, and the refresh token they replace (rotation) if any. */
/** The tokens a grant decided to issue, with the audit row written in the same transaction. */
export interface IssuePlan {
  tokens: NewToken[];
  audit?: NewAuditEvent;
}

export interface TokenOwner {
  clientId: number;
  userId: number;
  familyId: string | null;
  parentId: number | null;
}

// --- Refresh token rotation (TokenStore.rotateRefresh).
export interface RotateInput<P extends IssuePlan = IssuePlan> {
  refreshHash: string;
  /**
   * The authenticated client; a refresh token of another client is invalid. Re-checked inside the transaction
   * with the token's user (still_authorized.ts), so a rotation in flight cannot outrun a secret rotation or a
   * disable.
   */
  client: AuthenticatedClient;
  now: number;
  graceSeconds: number;
  /**
   * Computes the new pair from the presented refresh token (scope narrowing happens here), and the audit row the
   * rotation writes with it; `retried` is true for a grace-period retry. The plan comes back in the "ok" result.
   * Returning undefined refuses; throwing rolls the whole rotation back. It may be called more than once (a
   * PostgreSQL store decides again when a concurrent change beat its first attempt): only the returned plan counts.
   */
  next: (presented: TokenRecord, retried: boolean) => P | undefined;
}

export type RotateResult<P extends IssuePlan = IssuePlan> =
  | { status: "ok"; presented: TokenRecord; retried: boolean; plan: P }
  /**
   * The token had already been rotated outside the grace period, or is the pair a grace retry replaced: its whole
   * family is now revoked.
   */
  | { status: "reused"; presented: TokenRecord }
  /** Unknown, another client's, expired, revoked, or refused by `next`. */
  | { status: "invalid" }
  /** The client's secret changed or it was disabled, or the user was disabled, since the request authenticated. */
  | { status: Withdrawn };

// --- The client and user a grant was made for, re-checked when its tokens are written.
/**
 * The client as it authenticated at the token endpoint: its row id, the digest its secret matched, and what the
 * grant took from the row. Everything the grant used is compared, not only what an admin command can change today.
 * The client_id is compared too: row ids are reused after deleting the newest client, so an id alone may name
 * another client.
 */
export type AuthenticatedClient = Pick<
  TokenClient,
  "id" | "clientId" | "secretHash" | "grantType" | "scope" | "integrationUserId" | "requireDpop" | "remembered"
>;

/** Why a re-check refused. */
export type Withdrawn = "client_changed" | "user_disabled";

/** What let the browser have a code, re-checked when the code is stored (CodeStore.issue). */
export interface CodeBasis {
  /** Digest of the session that asked: it must still exist and be unexpired, its user enabled. */
  sessionHash: string;
  /**
   * The public client_id the request named. Row ids of clients are reused: after `clients delete` of the newest
   * client the next `clients add` gets its id, so the row id alone could let a code (and a consent given with it)
   * meant for the deleted application be stored for the new one.
   */
  clientId: string;
  now: number;
  /**
   * "remembered": the user's stored consent to the client must still hold the code's scope (withdrawing it at
   * /account must stop a code already on its way). "given": the user approved just now, and the consent is stored
   * with the code.
   */
  consent: "remembered" | "given";
}

// --- throttle_counters table: failures per throttle key, which every instance on one database shares.
/** One counter an operation names: its key and the failures it tolerates per window. */
export interface CounterKey {
  key: string;
  limit: number;
}

/** The time an operation happens at, and how long a window of failures lasts. */
export interface CounterTimes {
  now: number;
  windowSeconds: number;
}

/** What to take back from a key: one failure (forgive) or all of them (reset). */
export interface CounterRelease {
  key: string;
  forgive?: boolean;
  reset?: boolean;
}

/** Seconds to wait when refused (0: not refused), and whether a failure counted here brought a key to its limit. */
export interface Charge {
  wait: number;
  lockout: boolean;
}

/**
 * One client authentication to check and count in one step: the client named `clientId`, the digest of the secret
 * presented (none when none was), and the counter gating it, `registered` when the client exists and `unknown`
 * otherwise (undefined: a key no throttle counts). A failure also counts against `unknown`.
 */
export interface ClientAttempt {
  clientId: string;
  digest: string | undefined;
  keys: { registered: CounterKey | undefined; unknown: CounterKey | undefined };
  /**
   * The caller issues next and its issuance re-checks what a remembered answer skipped (TokenClient.remembered): a
   * store may then authenticate from the client's row as it last read it, when that row, with no failures at the
   * gate, authenticates without writing. Without it every attempt reads the row and the gate.
   */
  fromMemory?: boolean;
}

/**
 * How a ClientAttempt ended, with the client row it was checked against: refused unchecked for `wait` seconds (the
 * gate was at its limit), authenticated (the gate's failures forgotten), or failed and counted (`lockout`: that
 * failure brought a key to its limit).
 */
export type ClientCheck =
  | { outcome: "refused"; wait: number; client: TokenClient | undefined }
  | { outcome: "authenticated"; client: TokenClient }
  | { outcome: "failed"; lockout: boolean; client: TokenClient | undefined };

/**
 * Failure counters per key, each operation atomic across every instance using the database. Several entries for one
 * key count as many times. A window whose start lies after `now` (the clock was stepped back) is moved to `now`, so
 * a lockout never lasts longer than one window from the moment it is seen.
 */
export interface ThrottleStore {
  /** Seconds until the last window ends among `keys` at their limit; 0 when none is at its limit. */
  retryAfter(keys: readonly CounterKey[], times: CounterTimes): Promise<number>;
  /** Counts the failures (a key whose window has ended starts a new one at `now`); true when one reached its limit. */
  fail(keys: readonly CounterKey[], times: CounterTimes): Promise<boolean>;
  /**
   * Counts one failure on each of `counted` before the attempt's outcome is known, unless one of `checked` is at its
   * limit: then nothing is counted and `wait` says for how long. One step, so parallel attempts cannot all pass.
   */
  charge(keys: { checked: readonly CounterKey[]; counted: readonly CounterKey[] }, times: CounterTimes): Promise<Charge>;
  /** Takes back what each entry names from keys that have a counter; others are left alone. */
  release(entries: readonly CounterRelease[]): Promise<void>;
  /**
   * Client authentication: looks up the client, checks the digest against its secret (in constant time; a disabled
   * client fails like a wrong secret) and counts the outcome, as one step under the gate's counter. Parallel guesses,
   * from any number of instances, are checked one after the other, each seeing the failures before it, so no more
   * are checked than the limit allows, and none waits for another.
   */
  authenticateClient(attempt: ClientAttempt, times: CounterTimes): Promise<ClientCheck>;
  /**
   * Records a DPoP proof (`keyHash`: a digest naming its key and jti) as seen until `expiresAt`; false when it was
   * already recorded, by any instance. One insert-if-absent, so of two parallel uses exactly one passes (RFC 9449
   * §11.1). Store.purge deletes the records whose time is over.
   */
  rememberProof(keyHash: string, expiresAt: number): Promise<boolean>;
  /** Counters whose key starts with `prefix`, whether or not their window has ended. */
  count(prefix: string): Promise<number>;
  /** Deletes the counters whose window has ended by `now`; how many. */
  purgeExpired(now: number): Promise<number>;
}

/** A counter as stored: its failures count while `now` < windowEnd. */
export interface CounterRow {
  windowEnd: number;
  failures: number;
}

// --- demo_states table: the demo client's per-browser state, stored by the digest of the demo cookie, already sealed.
export interface DemoStateRow {
  /** SHA-256 hex of the demo cookie value. */
  keyHash: string;
  /** The state, sealed by the caller; the store never sees it in the clear. */
  sealed: string;
  expiresAt: number;
}

export interface DemoStateStore {
  /** The sealed state saved under `keyHash`, unless it has expired. */
  find(keyHash: string, now: number): Promise<string | undefined>;
  /**
   * Saves or replaces the row, then deletes all but the `keep` other rows that expire last, in one transaction:
   * anyone can start a demo without signing in, so the table must stay bounded, as the in-memory map was.
   */
  save(row: DemoStateRow, options: { keep: number }): Promise<void>;
  /** Deletes the row saved under `keyHash`, if any. */
  delete(keyHash: string): Promise<void>;
}

// --- server_secrets table: per-deployment secrets shared by every worker and restart, each created once on first use.
export interface SecretStore {
  /**
   * The secret stored under `name`, storing `candidate` first when there is none: every instance that races to
   * create it gets the one row that won, so all of them derive the same keys.
   */
  ensure(name: string, candidate: string, now: number): Promise<string>;
}

// --- Maintenance results.
/** What a checkpoint achieved: complete when it copied every frame (for RESTART: and started the WAL over). */
export interface CheckpointOutcome {
  complete: boolean;
}

// --- Migration steps, as each backend's ordered list holds them.
export interface Migration {
  name: string;
  sql: string;
}

/**
 * An existing SQLite file opened read-only and not migrated, every read in one snapshot (a deferred BEGIN): for
 * copying a whole installation elsewhere while it stays exactly as it was (postgres/copy.ts reads it).
 */
export interface SqliteSnapshot {
  /** Every row of a query, as objects. */
  all(sql: string): Record<string, SqlValue>[];
  /** The rows of a query one at a time, each as its values in column order: a large table never sits in memory whole. */
  iterate(sql: string): IterableIterator<SqlValue[]>;
  /** Ends the snapshot and closes the file. */
  close(): void;
}

// --- The Doorkeeper import (ImportStore), and the queries each backend runs for its decisions (import_decisions.ts).
/** What was refused, where in which file, and why; never a secret, token or password. */
export interface ImportRefusal {
  kind: "application" | "integration_user" | "owner" | "token";
  /** Line of the row in its file. */
  line: number;
  /** The row's public identifier: an application's uid, an owner's resource_owner_id, a token row's id. */
  id: string;
  reason: string;
}

export interface ImportedClient {
  line: number;
  clientId: string;
  /** SHA-256 hex of the secret, as every client secret is stored. */
  secretHash: string;
  name: string;
  grantType: ClientGrantType;
  redirectUris: readonly string[];
  scope: string;
  /** The integration user a client_credentials client acts as, created when missing. */
  integrationUser: { username: string; organization: string } | null;
}

export interface ImportedOwner {
  line: number;
  /** The owner's id in the other server, which its tokens name. */
  ownerKey: string;
  username: string;
  organization: string;
  name: string | null;
  /** A password digest to verify at sign-in (bcrypt for Doorkeeper), or null: no password until one is set. */
  passwordHash: string | null;
}

export interface ImportedToken extends NewToken {
  line: number;
  /** The token row's id in the other server, for refusals. */
  rowId: string;
}

/** Tokens that belong together: one approval's family, or one client-credentials token (no family). */
export interface ImportedGrant {
  clientId: string;
  /** The owner the tokens belong to; null for client-credentials tokens, which belong to the client's integration user. */
  ownerKey: string | null;
  /** The family id to use when none of the tokens exists yet (IMPORTED_FAMILY_PREFIX + random); null without a family. */
  familyId: string | null;
  /** Scope of the family and of the consent recorded for it. */
  scope: string;
  tokens: ImportedToken[];
}

export interface ImportInput {
  clients: readonly ImportedClient[];
  owners: readonly ImportedOwner[];
  grants: readonly ImportedGrant[];
  now: number;
  /** Rolls everything back at the end: the result says what a real run would do. */
  dryRun: boolean;
  /** The audit row for the outcome, written in the same transaction (not on a dry run). */
  audit(result: ImportResult): NewAuditEvent;
}

export interface KindCounts {
  imported: number;
  /** Already here: matched, or imported by an earlier run and still present. */
  skipped: number;
  /** Imported by an earlier run and deleted or revoked in fieldgate since: never brought back. */
  removed: number;
  refused: number;
}

export interface ImportResult {
  applications: KindCounts;
  integrationUsers: KindCounts;
  owners: KindCounts;
  tokens: KindCounts;
  consents: number;
  /** Grants whose consent an earlier run recorded and someone revoked since: their new tokens count as removed. */
  consentsRevoked: number;
  /** Refusals the database state caused (an existing user of the wrong kind, a client not imported). */
  refusals: ImportRefusal[];
}

export interface ImportStore {
  /**
   * Applies the import in one transaction. What is already here is skipped, and what an earlier run brought in and
   * an operator removed since (the import record) stays removed, so running it again adds only what is new.
   */
  apply(input: ImportInput): Promise<ImportResult>;
}

/** What the import record names: one Doorkeeper row (or, for a consent, one owner and application) per kind. */
export type ImportRecordKind = "application" | "owner" | "consent" | "token";

/** A live user: found by name (ASCII case folded, as the unique index matches), or by row id. */
export interface ImportUser {
  id: number;
  kind: string;
}

/** A client here, with the integration user a client_credentials client acts as. */
export interface ImportClientRow {
  id: number;
  clientId: string;
  integrationUserId: number | null;
}

/** The new tokens of one grant, written together under `familyId` (created unless it exists). */
export interface GrantWrite {
  familyId: string | null;
  clientId: number;
  userId: number;
  scope: string;
  tokens: readonly ImportedToken[];
  /** Record the user's consent to the client for `scope` when they have none. */
  consent: boolean;
  now: number;
}

/**
 * The reads and writes the import's decisions need, each backend's own, all inside the import's one transaction. No
 * decision lives here: each operation does exactly what its name says.
 */
export interface ImportQueries {
  findLiveUserByName(username: string): Promise<ImportUser | undefined>;
  findLiveUser(id: number): Promise<ImportUser | undefined>;
  /** True when some client acts as this integration user. */
  actsForAClient(userId: number): Promise<boolean>;
  findClient(clientId: string): Promise<ImportClientRow | undefined>;
  findClientById(id: number): Promise<ImportClientRow | undefined>;
  /** A new user, member of the organization `slug` (created when missing); returns the user's id. */
  insertMember(user: { username: string; name: string | null; kind: string; passwordHash: string | null }, slug: string, now: number): Promise<number>;
  /** Adds a membership in `slug` (created when missing), unless there is one. */
  joinOrganization(userId: number, slug: string, now: number): Promise<void>;
  insertClient(client: ImportedClient, integrationUserId: number | null, now: number): Promise<number>;
  /** The tokens of `hashes` that exist (revoked, rotated or expired included): digest -> family id. */
  findTokens(hashes: readonly string[]): Promise<Map<string, string | null>>;
  hasConsent(userId: number, clientId: number): Promise<boolean>;
  /** Writes the grant; true when it recorded a consent. */
  writeGrant(grant: GrantWrite): Promise<boolean>;
  /** The keys of `kind` the import record holds: key -> the fieldgate row id recorded with it (null for none). */
  findRecords(kind: ImportRecordKind, keys: readonly string[]): Promise<Map<string, number | null>>;
  /** Adds rows to the import record; a key already there keeps its first row. */
  record(kind: ImportRecordKind, rows: readonly { key: string; targetId: number | null }[], now: number): Promise<void>;
  insertAudit(event: NewAuditEvent): Promise<void>;
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
export type ImportTransaction = <T>(work: (q: ImportQueries) => Promise<T>) => Promise<T>;
