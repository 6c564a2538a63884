// audit_events table: security events (token issued, reuse detected, sign-in failed, …) kept for review.
import type { Db, Row } from "./sqlite.ts";

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
   * the latest ones, as `tail` shows the end of a log.
   */
  list(options: { since?: number; limit?: number }): Promise<AuditEvent[]>;
}

function toEvent(row: Row): AuditEvent {
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
    async list({ since, limit = 1000 }) {
      const rows = since === undefined
        ? db.prepare("SELECT * FROM (SELECT * FROM audit_events ORDER BY id DESC LIMIT ?) ORDER BY id").all(limit)
        : db.prepare("SELECT * FROM audit_events WHERE at >= ? ORDER BY id LIMIT ?").all(since, limit);
      return (rows as Row[]).map(toEvent);
    },
  };
}
