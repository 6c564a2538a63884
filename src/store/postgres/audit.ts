// audit_events table on PostgreSQL: security events kept for review.
import type { AuditStore, MappedRow, NewAuditEvent } from "../contract.ts";
import { toEvent } from "../rows.ts";
import type { PgClient, PgQueryable } from "./connect.ts";

/** Inserts one audit row; on its own or inside a caller's transaction, so an operation and its row commit together. */
export async function insertPgAuditRow(q: PgQueryable, e: NewAuditEvent): Promise<void> {
  await q.query(
    "INSERT INTO audit_events (at, event, client_id, user_id, ip, detail) VALUES ($1, $2, $3, $4, $5, $6)",
    [e.at, e.event, e.clientId, e.userId, e.ip, e.detail === null ? null : JSON.stringify(e.detail)],
  );
}

// One fixed text per ordering; an absent filter is a NULL parameter that matches every row.
const WHO = "($1::bigint IS NULL OR user_id = $1) AND ($2::text IS NULL OR client_id = $2)";
const LATEST = `SELECT * FROM (SELECT * FROM audit_events WHERE ${WHO} ORDER BY id DESC LIMIT $3) latest ORDER BY id`;
const SINCE = `SELECT * FROM audit_events WHERE ${WHO} AND at >= $4 ORDER BY id LIMIT $3`;

export function createPgAuditStore(pg: PgClient): AuditStore {
  return {
    insert: (e) => insertPgAuditRow(pg, e),
    async list({ since, limit = 1000, userId, clientId }) {
      const filters = [userId ?? null, clientId ?? null, limit];
      const rows = since === undefined ? await pg.query(LATEST, filters) : await pg.query(SINCE, [...filters, since]);
      return rows.map((row) => toEvent(row as MappedRow));
    },
  };
}
