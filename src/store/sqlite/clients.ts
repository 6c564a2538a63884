// clients table: registered applications, their secret digest, grant type, redirect URIs and scope.
import type { Db, Row } from "./database.ts";
import type { ClientStore } from "../contract.ts";
import { rethrowConflict, StoreConflictError } from "../errors.ts";
import { grantColumns, INTEGRATION_USER_TAKEN, redirectUrisOf, toClient } from "../rows.ts";

export function createClientStore(db: Db): ClientStore {
  const byClientId = (clientId: string) =>
    db.prepare("SELECT * FROM clients WHERE client_id = ?").get(clientId) as Row | undefined;
  return {
    async insert(c) {
      const [grantType, redirectUri, resourceServer] = grantColumns(c);
      let row: Row | undefined;
      try {
        // One statement, so two registrations racing for the same integration user cannot both win. In a
        // transaction: see Db.transaction on RETURNING.
        row = db.transaction(() => db.prepare(`INSERT INTO clients
          (client_id, secret_hash, name, grant_type, redirect_uri, scope, integration_user_id, created_at, resource_server,
            require_dpop)
          SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
          WHERE ?7 IS NULL OR NOT EXISTS (SELECT 1 FROM clients WHERE integration_user_id = ?7) RETURNING *`)
          .get(c.clientId, c.secretHash, c.name, grantType, redirectUri, c.scope, c.integrationUserId, c.now, resourceServer,
            c.requireDpop ? 1 : 0) as Row | undefined);
      } catch (error) {
        rethrowConflict(error, "client_id already exists");
      }
      if (!row) throw new StoreConflictError(INTEGRATION_USER_TAKEN);
      return toClient(row);
    },
    async findByClientId(clientId) {
      const row = byClientId(clientId);
      return row && toClient(row);
    },
    async findById(id) {
      const row = db.prepare("SELECT * FROM clients WHERE id = ?").get(id) as Row | undefined;
      return row && toClient(row);
    },
    async list() {
      return (db.prepare("SELECT * FROM clients ORDER BY id").all() as Row[]).map(toClient);
    },
    async rotateSecret(clientId, { secretHash, now, revokeTokens }) {
      return db.transaction(() => {
        const row = db.prepare("UPDATE clients SET secret_hash = ?, secret_rotated_at = ? WHERE client_id = ? RETURNING *")
          .get(secretHash, now, clientId) as Row | undefined;
        if (!row) return undefined;
        if (revokeTokens) {
          db.prepare("UPDATE tokens SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL").run(now, Number(row.id));
          db.prepare(`UPDATE grant_families SET revoked_at = ?, revoked_reason = 'secret_rotated'
            WHERE client_id = ? AND revoked_at IS NULL`).run(now, Number(row.id));
        }
        return toClient(row);
      });
    },
    async replaceRedirectUri(clientId, redirectUri) {
      return db.transaction(() => {
        const row = db.prepare(`SELECT redirect_uri FROM clients WHERE client_id = ? AND grant_type = 'authorization_code'
          AND resource_server = 0`)
          .get(clientId) as Row | undefined;
        if (!row) return undefined;
        if (row.redirect_uri !== redirectUri) {
          db.prepare("UPDATE clients SET redirect_uri = ? WHERE client_id = ?").run(redirectUri, clientId);
        }
        return redirectUrisOf(row.redirect_uri);
      });
    },
    async remove(clientId, now) {
      return db.transaction(() => {
        const row = db.prepare("SELECT * FROM clients WHERE client_id = ?").get(clientId) as Row | undefined;
        if (!row) return undefined;
        const id = Number(row.id);
        const tokensRevoked = Number(db.prepare("SELECT COUNT(*) AS n FROM tokens WHERE client_id = ? AND revoked_at IS NULL AND expires_at > ?")
          .get(id, now)!.n);
        const consentsRemoved = Number(db.prepare("SELECT COUNT(*) AS n FROM consents WHERE client_id = ?").get(id)!.n);
        db.prepare("DELETE FROM clients WHERE id = ?").run(id);
        return { client: toClient(row), tokensRevoked, consentsRemoved };
      });
    },
    async setRequireDpop(clientId, required) {
      const row = db.transaction(() =>
        db.prepare("UPDATE clients SET require_dpop = ? WHERE client_id = ? RETURNING *").get(required ? 1 : 0, clientId) as Row | undefined
      );
      return row && toClient(row);
    },
    async setDisabled(clientId, disabled) {
      const row = db.transaction(() =>
        db.prepare("UPDATE clients SET disabled = ? WHERE client_id = ? RETURNING *").get(disabled ? 1 : 0, clientId) as Row | undefined
      );
      return row && toClient(row);
    },
  };
}
