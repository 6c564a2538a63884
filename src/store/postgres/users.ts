// users table on PostgreSQL, with the revocations an account change makes in the tables of tokens and sessions.
import { rethrowConflict } from "../errors.ts";
import type { AccessEnded, EraseOutcome, MappedRow, NewUser, RevokeOptions, User, UserStore } from "../contract.ts";
import { tombstoneName, toUser } from "../rows.ts";
import type { PgClient, PgQueryable } from "./connect.ts";
import { addPgMembershipRow, ensurePgOrganizationRow } from "./organizations.ts";

const userOf = (row: unknown): User => toUser(row as MappedRow);

/** Rows a statement of the form `WITH done AS (… RETURNING 1) SELECT COUNT(*) AS n FROM done` reports. */
async function counted(q: PgQueryable, text: string, params: (number | string)[]): Promise<number> {
  const [row] = await q.query<{ n: number }>(text, params);
  return row!.n;
}

async function insertUser(q: PgQueryable, { username, name = null, kind, passwordHash = null, now }: NewUser): Promise<User> {
  try {
    const [row] = await q.query(
      `INSERT INTO users (username, name, kind, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [username, name, kind, passwordHash, now],
    );
    return userOf(row);
  } catch (error) {
    rethrowConflict(error, `username "${username}" is already taken`);
  }
}

const endSessions = (q: PgQueryable, userId: number) =>
  counted(q, "WITH ended AS (DELETE FROM sessions WHERE user_id = $1 RETURNING 1) SELECT COUNT(*) AS n FROM ended", [userId]);

/** Revokes a user's live tokens ($1 now, $2 the user) and counts them; a search of tokens_by_user, not a scan. */
export const REVOKE_USER_TOKENS = `WITH revoked AS (UPDATE tokens SET revoked_at = $1
  WHERE user_id = $2 AND revoked_at IS NULL AND expires_at > $1 RETURNING 1) SELECT COUNT(*) AS n FROM revoked`;

/**
 * Everything the user ever granted: grant families (before their tokens, the one lock order), the remembered
 * approvals that would otherwise hand a code to an approved application again without asking, and the tokens.
 * Counts the tokens still live.
 */
async function revokeTokens(q: PgQueryable, userId: number, reason: string, { revokeTokensAt: now }: RevokeOptions): Promise<number> {
  if (now === undefined) return 0;
  await q.query(
    "UPDATE grant_families SET revoked_at = $1, revoked_reason = $2 WHERE user_id = $3 AND revoked_at IS NULL",
    [now, reason, userId],
  );
  await q.query("DELETE FROM consents WHERE user_id = $1", [userId]);
  return counted(
    q,
    REVOKE_USER_TOKENS,
    [now, userId],
  );
}

/**
 * Erases a user whose row this transaction has locked: tokens go with their grant families (ON DELETE CASCADE, so
 * each family is locked before its tokens), then the user's remaining tokens and codes.
 */
async function eraseRows(tx: PgQueryable, id: number, now: number): Promise<EraseOutcome> {
  const tokensRevoked = await counted(
    tx,
    "SELECT COUNT(*) AS n FROM tokens WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2",
    [id, now],
  );
  await tx.query("DELETE FROM grant_families WHERE user_id = $1", [id]);
  await tx.query("DELETE FROM tokens WHERE user_id = $1", [id]);
  await tx.query("DELETE FROM authorization_codes WHERE user_id = $1", [id]);
  // The rest touch tables nothing else locks in a fixed order with these: one statement, one round trip.
  const [row] = await tx.query<{ consents: number; sessions: number; memberships: number; audit: number }>(
    `WITH gone_consents AS (DELETE FROM consents WHERE user_id = $1 RETURNING 1),
      gone_sessions AS (DELETE FROM sessions WHERE user_id = $1 RETURNING 1),
      gone_memberships AS (DELETE FROM memberships WHERE user_id = $1 RETURNING 1),
      anonymized AS (UPDATE audit_events SET ip = NULL WHERE user_id = $1 AND ip IS NOT NULL RETURNING 1),
      tombstone AS (UPDATE users SET username = $2, name = NULL, password_hash = NULL, disabled = 1, deleted_at = $3
        WHERE id = $1)
    SELECT (SELECT COUNT(*) FROM gone_consents) AS consents, (SELECT COUNT(*) FROM gone_sessions) AS sessions,
      (SELECT COUNT(*) FROM gone_memberships) AS memberships, (SELECT COUNT(*) FROM anonymized) AS audit`,
    [id, tombstoneName(id), now],
  );
  return {
    status: "erased",
    tokensRevoked,
    consents: row!.consents,
    sessionsEnded: row!.sessions,
    memberships: row!.memberships,
    auditEventsAnonymized: row!.audit,
  };
}

export function createPgUserStore(pg: PgClient): UserStore {
  const one = async (text: string, value: number | string) => {
    const [row] = await pg.query(text, [value]);
    return row && userOf(row);
  };
  return {
    insert: (user) => insertUser(pg, user),
    insertMember(user, slug, organizationName = slug) {
      // One transaction: a taken username rolls the new organization back with it.
      return pg.transaction(async (tx) => {
        const { organization } = await ensurePgOrganizationRow(tx, { slug, name: organizationName, now: user.now });
        const created = await insertUser(tx, user);
        await addPgMembershipRow(tx, { organizationId: organization.id, userId: created.id, role: "member", now: user.now });
        return created;
      });
    },
    findById: (id) => one("SELECT * FROM users WHERE id = $1", id),
    // The expression of the unique index users_username_nocase: SQLite's NOCASE, whatever the database's locale.
    findByUsername: (username) =>
      one(`SELECT * FROM users WHERE lower(username COLLATE "C") = lower($1::text COLLATE "C") AND deleted_at IS NULL`, username),
    async list() {
      return (await pg.query("SELECT * FROM users WHERE deleted_at IS NULL ORDER BY id")).map(userOf);
    },
    async updatePasswordHash(id, passwordHash, { replacing }) {
      const rows = await pg.query(
        "UPDATE users SET password_hash = $1 WHERE id = $2 AND kind = 'person' AND password_hash = $3 RETURNING 1 AS updated",
        [passwordHash, id, replacing],
      );
      return rows.length === 1;
    },
    replacePassword(id, passwordHash, options = {}): Promise<AccessEnded> {
      // The user row first: a sign-in (SessionStore.replace) locks it too, so it either commits before and its
      // session is ended here, or waits and then finds the password replaced.
      return pg.transaction(async (tx) => {
        await tx.query("UPDATE users SET password_hash = $1 WHERE id = $2 AND kind = 'person'", [passwordHash, id]);
        const sessionsEnded = await endSessions(tx, id);
        return { sessionsEnded, tokensRevoked: await revokeTokens(tx, id, "password_changed", options) };
      });
    },
    setDisabled(id, disabled, options = {}): Promise<AccessEnded> {
      return pg.transaction(async (tx) => {
        await tx.query("UPDATE users SET disabled = $1 WHERE id = $2", [disabled ? 1 : 0, id]);
        const sessionsEnded = disabled ? await endSessions(tx, id) : 0;
        return { sessionsEnded, tokensRevoked: await revokeTokens(tx, id, "user_disabled", options) };
      });
    },
    erase(id, now) {
      return pg.transaction(async (tx): Promise<EraseOutcome> => {
        // FOR UPDATE, not the UPDATE's weaker lock: it also waits for a client being registered with this user as
        // its integration user (its foreign-key check holds FOR KEY SHARE), which the next statement then sees.
        const [user] = await tx.query<{ deleted_at: number | null }>("SELECT deleted_at FROM users WHERE id = $1 FOR UPDATE", [id]);
        const [client] = await tx.query<{ client_id: string }>(
          "SELECT client_id FROM clients WHERE integration_user_id = $1 LIMIT 1",
          [id],
        );
        if (client) return { status: "client_integration_user", clientId: client.client_id };
        if (!user || user.deleted_at !== null) return { status: "missing" };
        return eraseRows(tx, id, now);
      });
    },
  };
}
