// sessions table: browser sign-in sessions, stored by the digest of the cookie value.
import type { Db, Row } from "./database.ts";
import type { NewSession, SessionStore } from "../contract.ts";
import { toSession } from "../rows.ts";

export function createSessionStore(db: Db): SessionStore {
  const insert = (s: NewSession) =>
    db.prepare("INSERT INTO sessions (session_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
      .run(s.sessionHash, s.userId, s.createdAt, s.expiresAt);
  return {
    async insert(s) {
      await db.transactionBatched(() => insert(s));
    },
    async replace(oldHash, s, { passwordHash, maxSessions }) {
      return db.transactionBatched(() => {
        const current = db.prepare("SELECT 1 FROM users WHERE id = ? AND password_hash = ? AND disabled = 0")
          .get(s.userId, passwordHash);
        if (!current) return false;
        if (oldHash !== undefined) db.prepare("DELETE FROM sessions WHERE session_hash = ?").run(oldHash);
        insert(s);
        // Ids grow with insertion, so the highest are the newest sessions.
        db.prepare(`DELETE FROM sessions WHERE user_id = ? AND expires_at > ? AND id NOT IN
          (SELECT id FROM sessions WHERE user_id = ? AND expires_at > ? ORDER BY id DESC LIMIT ?)`)
          .run(s.userId, s.createdAt, s.userId, s.createdAt, maxSessions);
        return true;
      });
    },
    async findActive(sessionHash, now) {
      const row = db.prepare(`SELECT s.* FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.session_hash = ? AND s.expires_at > ? AND u.disabled = 0`).get(sessionHash, now) as Row | undefined;
      return row && toSession(row);
    },
    async delete(sessionHash) {
      await db.transactionBatched(() => db.prepare("DELETE FROM sessions WHERE session_hash = ?").run(sessionHash));
    },
    async countOthers(userId, sessionHash, now) {
      const row = db.prepare("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ? AND session_hash <> ? AND expires_at > ?")
        .get(userId, sessionHash, now) as Row;
      return Number(row.n);
    },
    async endOthers(userId, sessionHash) {
      return db.transactionBatched(() =>
        Number(db.prepare("DELETE FROM sessions WHERE user_id = ? AND session_hash <> ?").run(userId, sessionHash).changes)
      );
    },
  };
}
