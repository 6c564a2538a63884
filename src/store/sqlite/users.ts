// users table: platform users (with a password hash) and integration users (never sign in).
import type { Db, Row } from "./database.ts";
import { rethrowConflict } from "../errors.ts";
import { addMembershipRow, ensureOrganizationRow } from "./organizations.ts";

export type UserKind = "person" | "integration";

/** The longest username: an e-mail address fits (RFC 5321 §4.5.3.1.3 limits a path to 256 with its brackets). */
export const MAX_USERNAME_LENGTH = 254;

export interface User {
  id: number;
  username: string;
  name: string | null;
  kind: UserKind;
  passwordHash: string | null;
  disabled: boolean;
  createdAt: number;
}

/**
 * The password hash `user` signs in with, or undefined for a user who cannot sign in: an integration user, a
 * disabled one, one without a password.
 */
export function signInHash(user: User | undefined): string | undefined {
  return user && user.kind === "person" && !user.disabled && user.passwordHash !== null ? user.passwordHash : undefined;
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

/** A row of users as the domain object; shared with the PostgreSQL store, whose columns are the same. */
export function toUser(row: Row): User {
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

/** Revokes a user's live tokens (revoked_at, user id, now); a search of tokens_by_user, not a scan of the table. */
export const REVOKE_USER_TOKENS = "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?";

export function createUserStore(db: Db): UserStore {
  function insertUser({ username, name = null, kind, passwordHash = null, now }: NewUser): User {
    try {
      const row = db.prepare(`INSERT INTO users (username, name, kind, password_hash, created_at)
        VALUES (?, ?, ?, ?, ?) RETURNING *`).get(username, name, kind, passwordHash, now) as Row;
      return toUser(row);
    } catch (error) {
      rethrowConflict(error, `username "${username}" is already taken`);
    }
  }
  const endSessions = (userId: number) => Number(db.prepare("DELETE FROM sessions WHERE user_id = ?").run(userId).changes);
  // Everything the user ever granted: tokens, their grant families, and the remembered approvals that would
  // otherwise hand a code to an approved application again without asking. Counts the tokens still live.
  const revokeTokens = (userId: number, reason: string, { revokeTokensAt: now }: RevokeOptions): number => {
    if (now === undefined) return 0;
    db.prepare("UPDATE grant_families SET revoked_at = ?, revoked_reason = ? WHERE user_id = ? AND revoked_at IS NULL")
      .run(now, reason, userId);
    db.prepare("DELETE FROM consents WHERE user_id = ?").run(userId);
    return Number(db.prepare(REVOKE_USER_TOKENS).run(now, userId, now).changes);
  };
  return {
    async insert(user) {
      return db.transaction(() => insertUser(user));
    },
    async insertMember(user, slug, organizationName = slug) {
      return db.transaction(() => {
        const organizationId = ensureOrganizationRow(db, { slug, name: organizationName, now: user.now });
        const created = insertUser(user);
        addMembershipRow(db, { organizationId, userId: created.id, role: "member", now: user.now });
        return created;
      });
    },
    async findById(id) {
      const row = db.prepare("SELECT * FROM users WHERE id = ?").get(id) as Row | undefined;
      return row && toUser(row);
    },
    async findByUsername(username) {
      const row = db.prepare("SELECT * FROM users WHERE username = ? AND deleted_at IS NULL").get(username) as Row | undefined;
      return row && toUser(row);
    },
    async list() {
      return (db.prepare("SELECT * FROM users WHERE deleted_at IS NULL ORDER BY id").all() as Row[]).map(toUser);
    },
    async updatePasswordHash(id, passwordHash, { replacing }) {
      return db.transactionBatched(() =>
        db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND kind = 'person' AND password_hash = ?")
          .run(passwordHash, id, replacing).changes === 1
      );
    },
    async replacePassword(id, passwordHash, options = {}) {
      return db.transaction(() => {
        db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND kind = 'person'").run(passwordHash, id);
        return { sessionsEnded: endSessions(id), tokensRevoked: revokeTokens(id, "password_changed", options) };
      });
    },
    async setDisabled(id, disabled, options = {}) {
      return db.transaction(() => {
        db.prepare("UPDATE users SET disabled = ? WHERE id = ?").run(disabled ? 1 : 0, id);
        return { sessionsEnded: disabled ? endSessions(id) : 0, tokensRevoked: revokeTokens(id, "user_disabled", options) };
      });
    },
    async erase(id, now) {
      return db.transaction((): EraseOutcome => {
        const client = db.prepare("SELECT client_id FROM clients WHERE integration_user_id = ? LIMIT 1").get(id) as Row | undefined;
        if (client) return { status: "client_integration_user", clientId: String(client.client_id) };
        const erased = db.prepare(`UPDATE users SET username = ?, name = NULL, password_hash = NULL, disabled = 1,
          deleted_at = ? WHERE id = ? AND deleted_at IS NULL`).run(tombstoneName(id), now, id).changes;
        if (Number(erased) === 0) return { status: "missing" };
        const removed = (table: string) => Number(db.prepare(`DELETE FROM ${table} WHERE user_id = ?`).run(id).changes);
        const tokensRevoked = Number(db.prepare("SELECT COUNT(*) AS n FROM tokens WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?")
          .get(id, now)!.n);
        // Tokens, then codes, then the families both belong to: each delete finds nothing left to cascade to.
        removed("tokens");
        removed("authorization_codes");
        removed("grant_families");
        return {
          status: "erased",
          tokensRevoked,
          consents: removed("consents"),
          sessionsEnded: removed("sessions"),
          memberships: removed("memberships"),
          auditEventsAnonymized: Number(db.prepare("UPDATE audit_events SET ip = NULL WHERE user_id = ? AND ip IS NOT NULL")
            .run(id).changes),
        };
      });
    },
  };
}
