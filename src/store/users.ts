// users table: platform users (with a password hash) and integration users (never sign in).
import type { Db, Row } from "./sqlite.ts";
import { rethrowConflict } from "./errors.ts";
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
   * Inserts the user as a member of the organization `slug`, creating that organization if it is missing; all or
   * nothing, so a taken username leaves no new organization behind.
   * @throws StoreConflictError when the username is taken (case-insensitively).
   */
  insertMember(user: NewUser, slug: string): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  findByUsername(username: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  /** Re-hashes a password (a stronger hash at sign-in); the user's sessions stay. */
  updatePasswordHash(id: number, passwordHash: string): Promise<void>;
  /**
   * Sets a person's new password and ends every sign-in session of theirs, in one transaction: whoever knew the old
   * password is signed out. Returns how many sessions ended.
   */
  replacePassword(id: number, passwordHash: string): Promise<{ sessionsEnded: number }>;
  /**
   * Disables or enables the user. Disabling ends their sessions in the same transaction; their tokens are refused
   * while disabled (every token check joins the user) and work again if enabled before they expire.
   */
  setDisabled(id: number, disabled: boolean): Promise<{ sessionsEnded: number }>;
}

function toUser(row: Row): User {
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
  return {
    async insert(user) {
      return insertUser(user);
    },
    async insertMember(user, slug) {
      return db.transaction(() => {
        const organizationId = ensureOrganizationRow(db, { slug, name: slug, now: user.now });
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
      const row = db.prepare("SELECT * FROM users WHERE username = ?").get(username) as Row | undefined;
      return row && toUser(row);
    },
    async list() {
      return (db.prepare("SELECT * FROM users ORDER BY id").all() as Row[]).map(toUser);
    },
    async updatePasswordHash(id, passwordHash) {
      await db.transactionBatched(() =>
        db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND kind = 'person'").run(passwordHash, id));
    },
    async replacePassword(id, passwordHash) {
      return db.transaction(() => {
        db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND kind = 'person'").run(passwordHash, id);
        return { sessionsEnded: endSessions(id) };
      });
    },
    async setDisabled(id, disabled) {
      return db.transaction(() => {
        db.prepare("UPDATE users SET disabled = ? WHERE id = ?").run(disabled ? 1 : 0, id);
        return { sessionsEnded: disabled ? endSessions(id) : 0 };
      });
    },
  };
}
