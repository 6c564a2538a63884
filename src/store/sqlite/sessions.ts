// sessions table: browser sign-in sessions, stored by the digest of the cookie value.
import type { Db, Row } from "./database.ts";

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

/** A row of sessions as the domain object; shared with the PostgreSQL store. */
export function toSession(row: Row): Session {
  return {
    id: Number(row.id),
    userId: Number(row.user_id),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

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
