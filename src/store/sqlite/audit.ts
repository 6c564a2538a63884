// audit_events table: security events (token issued, reuse detected, sign-in failed, …) kept for review.
import type { Db, Row } from "./database.ts";

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

/** A row of audit_events as the domain object, its detail parsed; shared with the PostgreSQL store. */
export function toEvent(row: Row): AuditEvent {
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

/** Inserts one audit row synchronously, so other store operations can write it inside their own transaction. */
export function insertAuditRow(db: Db, e: NewAuditEvent): void {
  db.prepare("INSERT INTO audit_events (at, event, client_id, user_id, ip, detail) VALUES (?, ?, ?, ?, ?, ?)")
    .run(e.at, e.event, e.clientId, e.userId, e.ip, e.detail === null ? null : JSON.stringify(e.detail));
}

export function createAuditStore(db: Db): AuditStore {
  return {
    async insert(e) {
      await db.transactionBatched(() => insertAuditRow(db, e));
    },
    async list({ since, limit = 1000, userId, clientId }) {
      // One fixed text per ordering; an absent filter is a NULL parameter that matches every row.
      const who = "(?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR client_id = ?2)";
      const filters = [userId ?? null, clientId ?? null];
      const rows = since === undefined
        ? db.prepare(`SELECT * FROM (SELECT * FROM audit_events WHERE ${who} ORDER BY id DESC LIMIT ?3) ORDER BY id`)
          .all(...filters, limit)
        : db.prepare(`SELECT * FROM audit_events WHERE ${who} AND at >= ?4 ORDER BY id LIMIT ?3`).all(...filters, limit, since);
      return (rows as Row[]).map(toEvent);
    },
  };
}
