// audit_events table: security events (token issued, reuse detected, sign-in failed, …) kept for review.
import type { Db, Row } from "./database.ts";
import type { AuditStore, NewAuditEvent } from "../contract.ts";
import { toEvent } from "../rows.ts";

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
