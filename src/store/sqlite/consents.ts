// consents table: which user approved which client for which scope, so consent can be remembered.
import type { Db, Row } from "./database.ts";
import type { ConsentStore } from "../contract.ts";
import { CONSENT_SELECT, toConsent } from "../rows.ts";

/** Records (or replaces) a consent; inside a transaction (also the code store's, on approval). */
export function grantConsentRow(db: Db, userId: number, clientId: number, scope: string, now: number): void {
  db.prepare(`INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES (?, ?, ?, ?)
    ON CONFLICT(user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at`)
    .run(userId, clientId, scope, now);
}

export function createConsentStore(db: Db): ConsentStore {
  return {
    async find(userId, clientId) {
      const row = db.prepare(`${CONSENT_SELECT} WHERE k.user_id = ? AND k.client_id = ?`).get(userId, clientId) as Row | undefined;
      return row && toConsent(row);
    },
    async grant(userId, clientId, { scope, now }) {
      await db.transactionBatched(() => grantConsentRow(db, userId, clientId, scope, now));
    },
    async listForUser(userId) {
      return (db.prepare(`${CONSENT_SELECT} WHERE k.user_id = ? ORDER BY c.name`).all(userId) as Row[]).map(toConsent);
    },
  };
}
