// Statements and parameters every issuing operation on PostgreSQL shares (tokens.ts, codes.ts, token_rotation.ts).
//
// Lock order, everywhere: clients and users rows, then the grant family, then token rows. Issuance takes the client,
// user and family rows FOR SHARE before it writes, and every revocation locks what it revokes by (the client, the
// user, the family) before the tokens; so whichever commits first, the other sees it: a revocation's later
// statement (a fresh snapshot under READ COMMITTED) finds the tokens an issuance committed, and an issuance that
// waited re-reads the row the revocation changed and refuses.
import type { PgQueryable, PgValue } from "./connect.ts";
import type { AuthenticatedClient, NewAuditEvent, NewToken, TokenOwner, Withdrawn } from "../contract.ts";

const CLIENT_IS = `id = $1 AND client_id = $2 AND secret_hash = $3 AND disabled = 0 AND grant_type = $4 AND scope = $5
  AND integration_user_id IS NOT DISTINCT FROM $6::bigint`;

/**
 * True while the client is still the row it authenticated as ($1 id, $2 client_id, $3 secret digest, $4 grant type,
 * $5 scope, $6 integration user) and enabled; locks that row FOR SHARE, so a rotation or disable waits for the
 * issuance to commit. Statements using it bind clientParams() as their first six parameters.
 */
export const CLIENT_STILL = `EXISTS (SELECT 1 FROM clients WHERE ${CLIENT_IS} FOR SHARE)`;

/** CLIENT_STILL without the lock: what a plain read saw at its moment, which the write after it checks again. */
export const CLIENT_WAS = `EXISTS (SELECT 1 FROM clients WHERE ${CLIENT_IS})`;

/** The parameters $1 to $6 of CLIENT_STILL; all null without a client, which then matches no row. */
export function clientParams(client: AuthenticatedClient | undefined): PgValue[] {
  if (!client) return [null, null, null, null, null, null];
  return [client.id, client.clientId, client.secretHash, client.grantType, client.scope, client.integrationUserId];
}

/** The first re-check that failed, in SQLite's order (clientAndUserStill): the client, then the user. */
export function withdrawnOf(row: { client_ok?: unknown; user_ok?: unknown }): Withdrawn | undefined {
  if (row.client_ok !== true) return "client_changed";
  return row.user_ok === true ? undefined : "user_disabled";
}

/** New token rows as a JSON array for json_to_recordset(… TOKEN_RECORD), one statement for any number of them. */
export function tokensJson(owner: TokenOwner, tokens: readonly NewToken[]): string {
  return JSON.stringify(tokens.map((t) => ({
    token_hash: t.tokenHash,
    kind: t.kind,
    grant_type: t.grantType,
    family_id: owner.familyId,
    client_id: owner.clientId,
    user_id: owner.userId,
    scope: t.scope,
    issued_at: t.issuedAt,
    expires_at: t.expiresAt,
    parent_id: owner.parentId,
  })));
}

/** The issuance's audit row, if any, as a JSON array of zero or one for json_to_recordset(… AUDIT_RECORD). */
export function auditJson(audit: NewAuditEvent | undefined): string {
  if (!audit) return "[]";
  const { at, event, clientId, userId, ip, detail } = audit;
  return JSON.stringify([{ at, event, client_id: clientId, user_id: userId, ip, detail: detail === null ? null : JSON.stringify(detail) }]);
}

const TOKEN_COLUMNS = "token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at, parent_id";
const TOKEN_RECORD = `r(token_hash text, kind text, grant_type text, family_id text, client_id bigint, user_id bigint,
  scope text, issued_at bigint, expires_at bigint, parent_id bigint)`;
const AUDIT_COLUMNS = "at, event, client_id, user_id, ip, detail";
const AUDIT_RECORD = "a(at bigint, event text, client_id text, user_id bigint, ip text, detail text)";

/** `INSERT INTO tokens` of the JSON rows in parameter `$n`, those of them for which `condition` holds. */
export function insertTokensSql(n: number, condition = "true"): string {
  return `INSERT INTO tokens (${TOKEN_COLUMNS}) SELECT ${TOKEN_COLUMNS} FROM json_to_recordset($${n}::text::json) AS ${TOKEN_RECORD}
    WHERE ${condition}`;
}

/** `INSERT INTO audit_events` of the JSON rows in parameter `$n`, when `condition` holds. */
export function insertAuditSql(n: number, condition = "true"): string {
  return `INSERT INTO audit_events (${AUDIT_COLUMNS}) SELECT ${AUDIT_COLUMNS} FROM json_to_recordset($${n}::text::json) AS ${AUDIT_RECORD}
    WHERE ${condition}`;
}

/** Tokens ($1) and their audit row ($2) in one statement, inside a transaction that has checked what it must. */
const INSERT_ISSUED = `WITH issued AS (${insertTokensSql(1)}) ${insertAuditSql(2)}`;

/** Inserts the tokens and the audit row of an issuance, in the caller's transaction. */
export async function insertIssued(
  tx: PgQueryable,
  owner: TokenOwner,
  tokens: readonly NewToken[],
  audit?: NewAuditEvent,
): Promise<void> {
  await tx.query(INSERT_ISSUED, [tokensJson(owner, tokens), auditJson(audit)]);
}

/**
 * Revokes a family and every token in it, in the caller's transaction; returns how many tokens. Two statements:
 * the first waits for issuances into the family (FOR SHARE) to commit, and the second, with a snapshot taken after
 * that, finds their tokens.
 */
export async function revokeFamily(tx: PgQueryable, familyId: string, now: number, reason: string): Promise<number> {
  await tx.query("UPDATE grant_families SET revoked_at = $1, revoked_reason = $2 WHERE id = $3 AND revoked_at IS NULL",
    [now, reason, familyId]);
  const [row] = await tx.query(`WITH revoked AS (UPDATE tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL
    RETURNING 1) SELECT COUNT(*) AS n FROM revoked`, [now, familyId]);
  return Number(row?.n);
}
