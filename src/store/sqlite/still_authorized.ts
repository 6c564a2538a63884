// Re-checks, inside a write transaction, what a request verified before it awaited. An admin command or another
// request that commits in between (a rotated secret, a disabled client or user, an ended session, a withdrawn
// consent) must stop what the request is about to write: the revocation only reaches rows that exist when it
// commits. SQLite's write lock orders the two, so a check here is exact: either the write commits first and the
// revocation catches what it wrote, or the revocation commits first and this check refuses.
import type { Db } from "./database.ts";
import type { AuthenticatedClient, CodeBasis, Withdrawn } from "../contract.ts";

/**
 * The client is still the row it authenticated as (same client_id, secret, grant type, scope, user, DPoP rule) and
 * enabled, and the user is enabled; a remembered client's gate (TokenClient.remembered) holds no failures.
 */
export function clientAndUserStill(db: Db, client: AuthenticatedClient, userId: number): Withdrawn | undefined {
  // One statement for both: it runs inside every token write's transaction.
  const row = db.prepare(`SELECT
    EXISTS (SELECT 1 FROM clients WHERE id = ? AND client_id = ? AND secret_hash = ? AND disabled = 0 AND grant_type = ?
      AND scope = ? AND integration_user_id IS ? AND require_dpop = ?) AS client_ok,
    EXISTS (SELECT 1 FROM users WHERE id = ? AND disabled = 0) AS user_ok`)
    .get(client.id, client.clientId, client.secretHash, client.grantType, client.scope, client.integrationUserId,
      client.requireDpop ? 1 : 0, userId) as { client_ok: number; user_ok: number };
  if (row.client_ok !== 1) return "client_changed";
  const gate = client.remembered?.gate;
  if (gate != null && db.prepare("SELECT 1 FROM throttle_counters WHERE key = ? AND failures > 0").get(gate)) {
    return "client_changed";
  }
  return row.user_ok === 1 ? undefined : "user_disabled";
}

/**
 * The session is live, its user enabled, and the client is the one the request named and enabled; with a
 * remembered consent, it is still there.
 */
export function codeBasisHolds(db: Db, basis: CodeBasis, code: { userId: number; clientId: number; scope: string }): boolean {
  const live = db.prepare(`SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
    JOIN clients c ON c.id = ? AND c.client_id = ?
    WHERE s.session_hash = ? AND s.user_id = ? AND s.expires_at > ? AND u.disabled = 0 AND c.disabled = 0`)
    .get(code.clientId, basis.clientId, basis.sessionHash, code.userId, basis.now);
  if (!live) return false;
  if (basis.consent === "given") return true;
  return db.prepare("SELECT 1 FROM consents WHERE user_id = ? AND client_id = ? AND scope = ?")
    .get(code.userId, code.clientId, code.scope) !== undefined;
}
