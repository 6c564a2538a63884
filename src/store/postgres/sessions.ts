// sessions table on PostgreSQL: browser sign-in sessions, stored by the digest of the cookie value.
import type { MappedRow, NewSession, SessionStore } from "../contract.ts";
import { toSession } from "../rows.ts";
import type { PgClient } from "./connect.ts";

const INSERT = "INSERT INTO sessions (session_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)";

export function createPgSessionStore(pg: PgClient): SessionStore {
  const values = (s: NewSession) => [s.sessionHash, s.userId, s.createdAt, s.expiresAt];
  return {
    async insert(s) {
      await pg.query(INSERT, values(s));
    },
    replace(oldHash, s, { passwordHash, maxSessions }) {
      return pg.transaction(async (tx) => {
        // FOR NO KEY UPDATE: a password change or a disable (which update the row) and another sign-in of the same
        // user wait for this transaction, or it waits for them and then re-reads the row, so a session never
        // outlives the password change that ended the others, and the trim below sees every committed session.
        // Token writes' foreign-key checks (FOR KEY SHARE) do not wait for it.
        const current = await tx.query(
          "SELECT 1 FROM users WHERE id = $1 AND password_hash = $2 AND disabled = 0 FOR NO KEY UPDATE",
          [s.userId, passwordHash],
        );
        if (current.length === 0) return false;
        if (oldHash !== undefined) await tx.query("DELETE FROM sessions WHERE session_hash = $1", [oldHash]);
        await tx.query(INSERT, values(s));
        // Ids grow with insertion, so the highest are the newest sessions.
        await tx.query(
          `DELETE FROM sessions WHERE user_id = $1 AND expires_at > $2 AND id NOT IN
          (SELECT id FROM sessions WHERE user_id = $1 AND expires_at > $2 ORDER BY id DESC LIMIT $3)`,
          [s.userId, s.createdAt, maxSessions],
        );
        return true;
      });
    },
    async findActive(sessionHash, now) {
      const [row] = await pg.query(
        `SELECT s.* FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.session_hash = $1 AND s.expires_at > $2 AND u.disabled = 0`,
        [sessionHash, now],
      );
      return row && toSession(row as MappedRow);
    },
    async delete(sessionHash) {
      await pg.query("DELETE FROM sessions WHERE session_hash = $1", [sessionHash]);
    },
    async countOthers(userId, sessionHash, now) {
      const [row] = await pg.query<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sessions WHERE user_id = $1 AND session_hash <> $2 AND expires_at > $3",
        [userId, sessionHash, now],
      );
      return row!.n;
    },
    async endOthers(userId, sessionHash) {
      const [row] = await pg.query<{ n: number }>(
        `WITH ended AS (DELETE FROM sessions WHERE user_id = $1 AND session_hash <> $2 RETURNING 1)
        SELECT COUNT(*) AS n FROM ended`,
        [userId, sessionHash],
      );
      return row!.n;
    },
  };
}
