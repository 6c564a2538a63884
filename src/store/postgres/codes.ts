// authorization_codes table on PostgreSQL (and the grant family each approval opens); consumed in tokens.exchangeCode.
import type { PgClient } from "./connect.ts";
import type { CodeStore } from "../contract.ts";

// One statement. The basis ($11 session digest, $12 public client_id, $13 now, $14 "given" or "remembered"; all null
// without one) is read FOR SHARE: a password change, disable or withdrawn consent that commits first is seen (the
// locked rows are read again as committed), and one that commits later waits for this code and then ends it.
const ISSUE = `WITH basis AS (SELECT $11::text IS NULL OR (
    EXISTS (SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id JOIN clients c ON c.id = $3 AND c.client_id = $12
      WHERE s.session_hash = $11 AND s.user_id = $4 AND s.expires_at > $13 AND u.disabled = 0 AND c.disabled = 0 FOR SHARE)
    AND ($14 = 'given' OR EXISTS (SELECT 1 FROM consents WHERE user_id = $4 AND client_id = $3 AND scope = $6 FOR SHARE))
  ) AS holds),
  consented AS (INSERT INTO consents (user_id, client_id, scope, granted_at)
    SELECT $4, $3, $6, $13 WHERE $14 = 'given' AND (SELECT holds FROM basis)
    ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at),
  family AS (INSERT INTO grant_families (id, client_id, user_id, scope, created_at)
    SELECT $2, $3, $4, $6, $9 WHERE (SELECT holds FROM basis) RETURNING id),
  code AS (INSERT INTO authorization_codes (code_hash, family_id, client_id, user_id, redirect_uri, scope,
      code_challenge, code_challenge_method, issued_at, expires_at, dpop_jkt)
    SELECT $1, id, $3, $4, $5, $6, $7, $8, $9, $10, $15 FROM family)
  SELECT holds FROM basis`;

export function createPgCodeStore(pg: PgClient): CodeStore {
  return {
    async issue(c, basis) {
      const [row] = await pg.query(ISSUE, [c.codeHash, c.familyId, c.clientId, c.userId, c.redirectUri, c.scope,
        c.codeChallenge, c.codeChallenge === null ? null : "S256", c.issuedAt, c.expiresAt,
        basis?.sessionHash ?? null, basis?.clientId ?? null, basis?.now ?? null, basis?.consent ?? null, c.dpopJkt ?? null]);
      return row?.holds === true;
    },
  };
}
