// users table: platform users (with a password hash) and integration users (never sign in).
import type { Db, Row } from "./database.ts";
import { rethrowConflict } from "../errors.ts";
import { addMembershipRow, ensureOrganizationRow } from "./organizations.ts";
import type { EraseOutcome, NewUser, RevokeOptions, User, UserStore } from "../contract.ts";
import { tombstoneName, toUser } from "../rows.ts";

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
