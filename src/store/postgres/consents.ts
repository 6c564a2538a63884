// consents table on PostgreSQL: which user approved which client for which scope, so consent can be remembered.
import { CONSENT_SELECT, toConsent } from "../rows.ts";
import type { ConsentStore, MappedRow } from "../contract.ts";
import type { PgClient, PgQueryable } from "./connect.ts";

/** Records (or replaces) a consent; on its own or inside a caller's transaction (a code issued on approval). */
export async function grantPgConsentRow(q: PgQueryable, userId: number, clientId: number, scope: string, now: number): Promise<void> {
  await q.query(
    `INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at`,
    [userId, clientId, scope, now],
  );
}

export function createPgConsentStore(pg: PgClient): ConsentStore {
  return {
    async find(userId, clientId) {
      const [row] = await pg.query(`${CONSENT_SELECT} WHERE k.user_id = $1 AND k.client_id = $2`, [userId, clientId]);
      return row && toConsent(row as MappedRow);
    },
    grant: (userId, clientId, { scope, now }) => grantPgConsentRow(pg, userId, clientId, scope, now),
    async listForUser(userId) {
      // "C": SQLite's BINARY order of names, whatever the database's locale.
      const rows = await pg.query(`${CONSENT_SELECT} WHERE k.user_id = $1 ORDER BY c.name COLLATE "C"`, [userId]);
      return rows.map((row) => toConsent(row as MappedRow));
    },
  };
}
