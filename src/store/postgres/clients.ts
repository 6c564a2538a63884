// clients table on PostgreSQL: registration, the token endpoint's lookup, secret rotation, disabling and deletion.
import type { PgClient, PgRow } from "./connect.ts";
import type { ClientStore } from "../contract.ts";
import { grantColumns, INTEGRATION_USER_TAKEN, redirectUrisOf, toClient, toTokenClient } from "../rows.ts";
import { rethrowConflict, StoreConflictError } from "../errors.ts";

/**
 * The client a token request names ($1), as a TokenClient row. authorization_code clients have no integration user:
 * user_enabled reads NULL for them, as for a missing one (not enabled). A scalar subquery rather than a LEFT JOIN:
 * 5 % fewer instructions for the token endpoint's client read (bench/pg_instructions.ts).
 */
export const TOKEN_CLIENT_SQL = `SELECT c.id, c.client_id, c.secret_hash, c.grant_type, c.redirect_uri, c.scope,
  c.integration_user_id, c.disabled, c.resource_server, c.require_dpop,
  (SELECT (u.disabled = 0)::integer FROM users u WHERE u.id = c.integration_user_id) AS user_enabled
  FROM clients c WHERE c.client_id = $1`;

// A second statement after the user's row lock, so it sees a registration that committed while this one waited.
const INSERT_SQL = `INSERT INTO clients
  (client_id, secret_hash, name, grant_type, redirect_uri, scope, integration_user_id, created_at, resource_server, require_dpop)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
  WHERE $7::bigint IS NULL OR NOT EXISTS (SELECT 1 FROM clients WHERE integration_user_id = $7) RETURNING *`;

// The counts read the rows as they were before the delete cascaded through them.
const REMOVE_SQL = `WITH gone AS (DELETE FROM clients WHERE client_id = $1 RETURNING *)
  SELECT gone.*,
    (SELECT COUNT(*) FROM tokens t WHERE t.client_id = gone.id AND t.revoked_at IS NULL AND t.expires_at > $2) AS tokens_revoked,
    (SELECT COUNT(*) FROM consents k WHERE k.client_id = gone.id) AS consents_removed
  FROM gone`;

export function createPgClientStore(pg: PgClient): ClientStore {
  const one = async (text: string, params: (string | number | null)[]): Promise<PgRow | undefined> =>
    (await pg.query(text, params))[0];
  return {
    async insert(c) {
      const [grantType, redirectUri, resourceServer] = grantColumns(c);
      let row: PgRow | undefined;
      try {
        row = await pg.transaction(async (tx) => {
          // The integration user's row lock orders two registrations racing for it: the second then finds the first.
          if (c.integrationUserId !== null) await tx.query("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", [c.integrationUserId]);
          const [inserted] = await tx.query(INSERT_SQL, [c.clientId, c.secretHash, c.name, grantType, redirectUri, c.scope,
            c.integrationUserId, c.now, resourceServer, c.requireDpop ? 1 : 0]);
          return inserted;
        });
      } catch (error) {
        rethrowConflict(error, "client_id already exists");
      }
      if (!row) throw new StoreConflictError(INTEGRATION_USER_TAKEN);
      return toClient(row);
    },
    async findByClientId(clientId) {
      const row = await one("SELECT * FROM clients WHERE client_id = $1", [clientId]);
      return row && toClient(row);
    },
    async findById(id) {
      const row = await one("SELECT * FROM clients WHERE id = $1", [id]);
      return row && toClient(row);
    },
    async list() {
      return (await pg.query("SELECT * FROM clients ORDER BY id")).map(toClient);
    },
    async rotateSecret(clientId, { secretHash, now, revokeTokens }) {
      return pg.transaction(async (tx) => {
        // The row lock waits for issuances that re-checked the old secret (FOR SHARE) to commit; the revocations below
        // are statements of their own, so their snapshots include those issuances' tokens.
        const [row] = await tx.query(
          "UPDATE clients SET secret_hash = $1, secret_rotated_at = $2 WHERE client_id = $3 RETURNING *",
          [secretHash, now, clientId],
        );
        if (!row) return undefined;
        if (revokeTokens) {
          // Grant families before their tokens, the lock order of every revocation.
          await tx.query(`UPDATE grant_families SET revoked_at = $1, revoked_reason = 'secret_rotated'
            WHERE client_id = $2 AND revoked_at IS NULL`, [now, row.id as number]);
          await tx.query("UPDATE tokens SET revoked_at = $1 WHERE client_id = $2 AND revoked_at IS NULL", [now, row.id as number]);
        }
        return toClient(row);
      });
    },
    async replaceRedirectUri(clientId, redirectUri) {
      const row = await one(`UPDATE clients c SET redirect_uri = $2
        FROM (SELECT id, redirect_uri FROM clients WHERE client_id = $1 AND grant_type = 'authorization_code'
          AND resource_server = 0 FOR UPDATE) old
        WHERE c.id = old.id RETURNING old.redirect_uri AS previous`, [clientId, redirectUri]);
      return row && redirectUrisOf(row.previous);
    },
    async setRequireDpop(clientId, required) {
      const row = await one("UPDATE clients SET require_dpop = $1 WHERE client_id = $2 RETURNING *", [required ? 1 : 0, clientId]);
      return row && toClient(row);
    },
    async setDisabled(clientId, disabled) {
      const row = await one("UPDATE clients SET disabled = $1 WHERE client_id = $2 RETURNING *", [disabled ? 1 : 0, clientId]);
      return row && toClient(row);
    },
    async remove(clientId, now) {
      const row = await one(REMOVE_SQL, [clientId, now]);
      if (!row) return undefined;
      return { client: toClient(row), tokensRevoked: Number(row.tokens_revoked), consentsRemoved: Number(row.consents_removed) };
    },
  };
}
