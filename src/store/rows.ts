// The row mappers and SQL text both backends share, where their columns and dialects agree: rows become the
// contract's domain objects here, so callers never see raw rows.
import type { AuditEvent, AuthorizationCode, BoundaryBudget, Client, ClientGrantType, Consent, CounterRow, Field, MappedRow, NewClient, Organization, Session, TokenClient, TokenDetails, TokenGrantType, TokenRecord, User } from "./contract.ts";
/** A row of audit_events as the domain object, its detail parsed; shared with the PostgreSQL store. */
export function toEvent(row: MappedRow): AuditEvent {
  let detail: Record<string, unknown> | null = null;
  if (typeof row.detail === "string") detail = JSON.parse(row.detail) as Record<string, unknown>;
  return {
    id: Number(row.id),
    at: Number(row.at),
    event: String(row.event),
    clientId: row.client_id === null ? null : String(row.client_id),
    userId: row.user_id === null ? null : Number(row.user_id),
    ip: row.ip === null ? null : String(row.ip),
    detail,
  };
}

/** A row of organizations as the domain object; shared with the PostgreSQL store, whose columns are the same. */
export function toOrganization(row: MappedRow): Organization {
  return { id: Number(row.id), slug: String(row.slug), name: String(row.name), createdAt: Number(row.created_at) };
}

/** The longest username: an e-mail address fits (RFC 5321 §4.5.3.1.3 limits a path to 256 with its brackets). */
export const MAX_USERNAME_LENGTH = 254;

/**
 * The password hash `user` signs in with, or undefined for a user who cannot sign in: an integration user, a
 * disabled one, one without a password.
 */
export function signInHash(user: User | undefined): string | undefined {
  return user && user.kind === "person" && !user.disabled && user.passwordHash !== null ? user.passwordHash : undefined;
}

/** A row of users as the domain object; shared with the PostgreSQL store, whose columns are the same. */
export function toUser(row: MappedRow): User {
  return {
    id: Number(row.id),
    username: String(row.username),
    name: row.name === null ? null : String(row.name),
    kind: row.kind === "integration" ? "integration" : "person",
    passwordHash: row.password_hash === null ? null : String(row.password_hash),
    disabled: row.disabled === 1,
    createdAt: Number(row.created_at),
  };
}

/**
 * A tombstone's username: it has spaces, which no username may have (oauth/registration.ts validateUsername), so it
 * never collides with a real one, and it says what the row is to whoever reads the table.
 */
export const tombstoneName = (id: number): string => `(deleted user ${id})`;

// The redirect_uri column holds the registered URIs joined by this: registration refuses a URI the URL standard
// would rewrite, and it rewrites every raw newline, so no URI can contain it.
const URI_SEPARATOR = "\n";

/** The registered URIs as the redirect_uri column holds them (shared with the PostgreSQL store). */
export function redirectUrisOf(value: unknown): string[] {
  return value === null || value === undefined || value === "" ? [] : String(value).split(URI_SEPARATOR);
}

/**
 * True when `presented` is, character for character, one of the client's registered redirect URIs: RFC 6749
 * §3.1.2.2 lets a client register several, and RFC 9700 §2.1 asks for exact string matching.
 */
export function isRegisteredRedirectUri(client: Pick<Client, "redirectUris">, presented: string): boolean {
  return client.redirectUris.includes(presented);
}

function redirectFields(row: MappedRow): Pick<Client, "redirectUri" | "redirectUris"> {
  const redirectUris = Object.freeze(redirectUrisOf(row.redirect_uri));
  return { redirectUri: redirectUris[0] ?? null, redirectUris };
}

/** True for a resource server: a client with no grant, which may introspect every token. */
export function isResourceServer(client: Pick<Client, "grantType">): boolean {
  return client.grantType === null;
}

/** The grant a clients row names: none when it is a resource server's (the migration "resource servers"). */
function grantTypeOf(row: MappedRow): ClientGrantType | null {
  if (row.resource_server === 1) return null;
  return row.grant_type === "client_credentials" ? "client_credentials" : "authorization_code";
}

/**
 * The grant_type, redirect_uri and resource_server columns for a new client: a resource server's row keeps the
 * grant_type CHECK with authorization_code and an empty redirect list (both stores).
 */
export function grantColumns(c: Pick<NewClient, "grantType" | "redirectUris">): [string, string | null, number] {
  if (c.grantType === null) return ["authorization_code", "", 1];
  return [c.grantType, redirectUriColumn(c.redirectUris), 0];
}

/** A clients row as a Client; the PostgreSQL store maps its rows with it too. */
export function toClient(row: MappedRow): Client {
  return {
    id: Number(row.id),
    clientId: String(row.client_id),
    secretHash: String(row.secret_hash),
    name: String(row.name),
    grantType: grantTypeOf(row),
    ...redirectFields(row),
    scope: String(row.scope),
    integrationUserId: row.integration_user_id === null ? null : Number(row.integration_user_id),
    disabled: row.disabled === 1,
    createdAt: Number(row.created_at),
    secretRotatedAt: row.secret_rotated_at === null ? null : Number(row.secret_rotated_at),
    requireDpop: row.require_dpop === 1,
  };
}

/** A row of a token-request lookup (the client and `user_enabled`, 0 or 1) as a TokenClient. */
export function toTokenClient(row: MappedRow): TokenClient {
  return {
    id: Number(row.id),
    clientId: String(row.client_id),
    secretHash: String(row.secret_hash),
    grantType: grantTypeOf(row),
    ...redirectFields(row),
    scope: String(row.scope),
    integrationUserId: row.integration_user_id === null ? null : Number(row.integration_user_id),
    disabled: row.disabled === 1,
    requireDpop: row.require_dpop === 1,
    integrationUserEnabled: row.user_enabled === 1,
  };
}

/**
 * The redirect_uri column's value for `uris`: joined, or null for none.
 * @throws TypeError for an empty URI or one holding the separator, which would split the stored list
 */
export function redirectUriColumn(uris: readonly string[]): string | null {
  if (uris.some((uri) => uri === "" || uri.includes(URI_SEPARATOR))) {
    throw new TypeError("a redirect URI must be non-empty and hold no newline");
  }
  return uris.length ? uris.join(URI_SEPARATOR) : null;
}

/** Why a registration is refused when its integration user already acts for a client. */
export const INTEGRATION_USER_TAKEN =
  "the integration user already belongs to another client; each client-credentials client gets its own (users add --integration)";

/** An authorization_codes row as an AuthorizationCode; the PostgreSQL store maps its rows with it too. */
export function toCode(row: MappedRow): AuthorizationCode {
  return {
    id: Number(row.id),
    familyId: String(row.family_id),
    clientId: Number(row.client_id),
    userId: Number(row.user_id),
    redirectUri: String(row.redirect_uri),
    scope: String(row.scope),
    codeChallenge: row.code_challenge === null ? null : String(row.code_challenge),
    codeChallengeMethod: row.code_challenge_method === "S256" ? "S256" : null,
    issuedAt: Number(row.issued_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    dpopJkt: typeof row.dpop_jkt === "string" ? row.dpop_jkt : null,
  };
}

/** A consent with its client's public id and name; no placeholders, so both backends append their own WHERE. */
export const CONSENT_SELECT = `SELECT k.client_id, k.scope, k.granted_at, c.client_id AS client_public_id, c.name AS client_name
  FROM consents k JOIN clients c ON c.id = k.client_id`;

/** A row of CONSENT_SELECT as the domain object. */
export function toConsent(row: MappedRow): Consent {
  return {
    clientId: Number(row.client_id),
    clientPublicId: String(row.client_public_id),
    clientName: String(row.client_name),
    scope: String(row.scope),
    grantedAt: Number(row.granted_at),
  };
}

/** A row of sessions as the domain object; shared with the PostgreSQL store. */
export function toSession(row: MappedRow): Session {
  return {
    id: Number(row.id),
    userId: Number(row.user_id),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

// Every column but the boundary (see Field), and with its size when boundaries are wanted: octet_length needs no
// copy of the text into JavaScript.
export const FIELD_COLUMNS = "id, organization_id, name, area_ha, crop, season, centroid_lon, centroid_lat, created_at, updated_at";
export const SIZED_COLUMNS = `${FIELD_COLUMNS}, octet_length(boundary) AS boundary_bytes`;

/** A row of FIELD_COLUMNS (either backend) as a Field without its boundary. */
export function toField(row: MappedRow): Field {
  return {
    id: Number(row.id),
    organizationId: Number(row.organization_id),
    name: String(row.name),
    areaHa: Number(row.area_ha),
    crop: row.crop === null ? null : String(row.crop),
    season: row.season === null ? null : String(row.season),
    centroid: { lon: Number(row.centroid_lon), lat: Number(row.centroid_lat) },
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * How many of `rows` (SIZED_COLUMNS, in id order) get their boundary: the budget is asked row by row and not again
 * after its first refusal.
 */
export function boundariesTaken(rows: readonly Record<string, unknown>[], budget: BoundaryBudget): number {
  let taken = 0;
  while (taken < rows.length && budget.take(Number(rows[taken]!.boundary_bytes))) taken++;
  return taken;
}

/** The token's own columns that toRecord maps, over `tokens t`. */
export const TOKEN_COLUMNS = `t.id, t.kind, t.grant_type, t.family_id, t.client_id, t.user_id, t.scope, t.issued_at,
  t.expires_at, t.revoked_at, t.rotated_at, t.dpop_jkt`;

/**
 * The columns toDetails maps (and no other: SQLite's bearer check reads them per request), over DETAIL_TABLES;
 * shared with the PostgreSQL store, whose tables are the same.
 */
export const DETAIL_COLUMNS = `${TOKEN_COLUMNS}, c.client_id AS client_public_id, c.name AS client_name, c.disabled AS client_disabled,
  u.username AS username, u.kind AS user_kind, u.disabled AS user_disabled`;
export const DETAIL_TABLES = "tokens t JOIN clients c ON c.id = t.client_id JOIN users u ON u.id = t.user_id";

export function toRecord(row: MappedRow): TokenRecord {
  return {
    id: Number(row.id),
    kind: row.kind === "refresh" ? "refresh" : "access",
    grantType: row.grant_type as TokenGrantType,
    familyId: row.family_id === null ? null : String(row.family_id),
    clientId: Number(row.client_id),
    userId: Number(row.user_id),
    scope: String(row.scope),
    issuedAt: Number(row.issued_at),
    expiresAt: Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
    dpopJkt: typeof row.dpop_jkt === "string" ? row.dpop_jkt : null,
  };
}

export function toDetails(row: MappedRow): TokenDetails {
  return {
    ...toRecord(row),
    clientPublicId: String(row.client_public_id),
    clientName: String(row.client_name),
    clientDisabled: row.client_disabled === 1,
    username: String(row.username),
    userKind: row.user_kind === "integration" ? "integration" : "person",
    userDisabled: row.user_disabled === 1,
  };
}

/** A throttle_counters row (either backend's) as a CounterRow. */
export function toCounterRow(row: MappedRow): CounterRow {
  return { windowEnd: Number(row.window_end), failures: Number(row.failures) };
}
