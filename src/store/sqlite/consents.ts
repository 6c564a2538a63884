// consents table: which user approved which client for which scope, so consent can be remembered.
import type { Db, Row } from "./database.ts";

export interface Consent {
  /** Internal client row id. */
  clientId: number;
  clientPublicId: string;
  clientName: string;
  scope: string;
  grantedAt: number;
}

export interface ConsentStore {
  find(userId: number, clientId: number): Promise<Consent | undefined>;
  /** Records (or replaces) the user's consent to the client for `scope`. */
  grant(userId: number, clientId: number, options: { scope: string; now: number }): Promise<void>;
  listForUser(userId: number): Promise<Consent[]>;
}

/** A consent with its client's public id and name; no placeholders, so both backends append their own WHERE. */
export const CONSENT_SELECT = `SELECT k.client_id, k.scope, k.granted_at, c.client_id AS client_public_id, c.name AS client_name
  FROM consents k JOIN clients c ON c.id = k.client_id`;

/** A row of CONSENT_SELECT as the domain object. */
export function toConsent(row: Row): Consent {
  return {
    clientId: Number(row.client_id),
    clientPublicId: String(row.client_public_id),
    clientName: String(row.client_name),
    scope: String(row.scope),
    grantedAt: Number(row.granted_at),
  };
}

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
