// clients table: registered applications, their secret digest, grant type, redirect URIs and scope.
import type { Db, MappedRow, Row } from "./database.ts";
import { rethrowConflict, StoreConflictError } from "../errors.ts";

export type ClientGrantType = "authorization_code" | "client_credentials";

export interface Client {
  /** Internal row id; foreign keys point here. */
  id: number;
  /** Public OAuth client_id. */
  clientId: string;
  /** SHA-256 hex of the client secret. */
  secretHash: string;
  name: string;
  grantType: ClientGrantType;
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
}

/**
 * The client as client authentication (ThrottleStore.authenticateClient) reads it for the token, revocation and
 * introspection endpoints: only the columns they use, plus whether its integration user may act, so
 * client_credentials issuance needs no second read.
 */
export type TokenClient = Pick<
  Client,
  "id" | "clientId" | "secretHash" | "grantType" | "redirectUri" | "redirectUris" | "scope" | "integrationUserId" | "disabled"
> & {
  /** True only when the integration user exists and is not disabled; false for clients without one. */
  integrationUserEnabled: boolean;
};

/** A client to register: its attributes without the row id and the flags and times the store sets. */
export type NewClient = Omit<Client, "id" | "disabled" | "createdAt" | "secretRotatedAt" | "redirectUri"> & { now: number };

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
  /** Disables (or re-enables) a client; a disabled client's tokens stop being accepted. */
  setDisabled(clientId: string, disabled: boolean): Promise<Client | undefined>;
  /**
   * Deletes the client and, through the schema's cascades, its tokens, codes, grant families and the approvals users
   * gave it, in one transaction; undefined when there is no such client. Its integration user stays (a user of its
   * own, which `users delete` can then erase). Counts what was still live.
   */
  remove(clientId: string, now: number): Promise<{ client: Client; tokensRevoked: number; consentsRemoved: number } | undefined>;
}

function redirectFields(row: MappedRow): Pick<Client, "redirectUri" | "redirectUris"> {
  const redirectUris = Object.freeze(redirectUrisOf(row.redirect_uri));
  return { redirectUri: redirectUris[0] ?? null, redirectUris };
}

/** A clients row as a Client; the PostgreSQL store maps its rows with it too. */
export function toClient(row: MappedRow): Client {
  return {
    id: Number(row.id),
    clientId: String(row.client_id),
    secretHash: String(row.secret_hash),
    name: String(row.name),
    grantType: row.grant_type === "client_credentials" ? "client_credentials" : "authorization_code",
    ...redirectFields(row),
    scope: String(row.scope),
    integrationUserId: row.integration_user_id === null ? null : Number(row.integration_user_id),
    disabled: row.disabled === 1,
    createdAt: Number(row.created_at),
    secretRotatedAt: row.secret_rotated_at === null ? null : Number(row.secret_rotated_at),
  };
}

/** A row of a token-request lookup (the client and `user_enabled`, 0 or 1) as a TokenClient. */
export function toTokenClient(row: MappedRow): TokenClient {
  return {
    id: Number(row.id),
    clientId: String(row.client_id),
    secretHash: String(row.secret_hash),
    grantType: row.grant_type === "client_credentials" ? "client_credentials" : "authorization_code",
    ...redirectFields(row),
    scope: String(row.scope),
    integrationUserId: row.integration_user_id === null ? null : Number(row.integration_user_id),
    disabled: row.disabled === 1,
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

export function createClientStore(db: Db): ClientStore {
  const byClientId = (clientId: string) =>
    db.prepare("SELECT * FROM clients WHERE client_id = ?").get(clientId) as Row | undefined;
  return {
    async insert(c) {
      const redirectUri = redirectUriColumn(c.redirectUris);
      let row: Row | undefined;
      try {
        // One statement, so two registrations racing for the same integration user cannot both win. In a
        // transaction: see Db.transaction on RETURNING.
        row = db.transaction(() => db.prepare(`INSERT INTO clients
          (client_id, secret_hash, name, grant_type, redirect_uri, scope, integration_user_id, created_at)
          SELECT ?, ?, ?, ?, ?, ?, ?, ?
          WHERE ?7 IS NULL OR NOT EXISTS (SELECT 1 FROM clients WHERE integration_user_id = ?7) RETURNING *`)
          .get(c.clientId, c.secretHash, c.name, c.grantType, redirectUri, c.scope, c.integrationUserId, c.now) as Row | undefined);
      } catch (error) {
        rethrowConflict(error, "client_id already exists");
      }
      if (!row) throw new StoreConflictError(INTEGRATION_USER_TAKEN);
      return toClient(row);
    },
    async findByClientId(clientId) {
      const row = byClientId(clientId);
      return row && toClient(row);
    },
    async findById(id) {
      const row = db.prepare("SELECT * FROM clients WHERE id = ?").get(id) as Row | undefined;
      return row && toClient(row);
    },
    async list() {
      return (db.prepare("SELECT * FROM clients ORDER BY id").all() as Row[]).map(toClient);
    },
    async rotateSecret(clientId, { secretHash, now, revokeTokens }) {
      return db.transaction(() => {
        const row = db.prepare("UPDATE clients SET secret_hash = ?, secret_rotated_at = ? WHERE client_id = ? RETURNING *")
          .get(secretHash, now, clientId) as Row | undefined;
        if (!row) return undefined;
        if (revokeTokens) {
          db.prepare("UPDATE tokens SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL").run(now, Number(row.id));
          db.prepare(`UPDATE grant_families SET revoked_at = ?, revoked_reason = 'secret_rotated'
            WHERE client_id = ? AND revoked_at IS NULL`).run(now, Number(row.id));
        }
        return toClient(row);
      });
    },
    async replaceRedirectUri(clientId, redirectUri) {
      return db.transaction(() => {
        const row = db.prepare("SELECT redirect_uri FROM clients WHERE client_id = ? AND grant_type = 'authorization_code'")
          .get(clientId) as Row | undefined;
        if (!row) return undefined;
        if (row.redirect_uri !== redirectUri) {
          db.prepare("UPDATE clients SET redirect_uri = ? WHERE client_id = ?").run(redirectUri, clientId);
        }
        return redirectUrisOf(row.redirect_uri);
      });
    },
    async remove(clientId, now) {
      return db.transaction(() => {
        const row = db.prepare("SELECT * FROM clients WHERE client_id = ?").get(clientId) as Row | undefined;
        if (!row) return undefined;
        const id = Number(row.id);
        const tokensRevoked = Number(db.prepare("SELECT COUNT(*) AS n FROM tokens WHERE client_id = ? AND revoked_at IS NULL AND expires_at > ?")
          .get(id, now)!.n);
        const consentsRemoved = Number(db.prepare("SELECT COUNT(*) AS n FROM consents WHERE client_id = ?").get(id)!.n);
        db.prepare("DELETE FROM clients WHERE id = ?").run(id);
        return { client: toClient(row), tokensRevoked, consentsRemoved };
      });
    },
    async setDisabled(clientId, disabled) {
      const row = db.transaction(() =>
        db.prepare("UPDATE clients SET disabled = ? WHERE client_id = ? RETURNING *").get(disabled ? 1 : 0, clientId) as Row | undefined
      );
      return row && toClient(row);
    },
  };
}
