// Statements and parameters every issuing operation on PostgreSQL shares (tokens.ts, codes.ts, token_rotation.ts).
//
// Lock order, everywhere: clients and users rows, then the grant family, then token rows. Issuance takes the client,
// user and family rows FOR SHARE before it writes, and every revocation locks what it revokes by (the client, the
// user, the family) before the tokens; so whichever commits first, the other sees it: a revocation's later
// statement (a fresh snapshot under READ COMMITTED) finds the tokens an issuance committed, and an issuance that
// waited re-reads the row the revocation changed and refuses.
import type { PgQueryable, PgValue } from "./connect.ts";
import type { AuthenticatedClient, NewAuditEvent, NewToken, TokenOwner, Withdrawn } from "../contract.ts";

/** What CLIENT_STILL and CLIENT_WAS compare, in parameter order: $1 to $6 of every statement that uses them. */
const CLIENT_PARAMS = ["id", "clientId", "secretHash", "grantType", "scope", "integrationUserId"] as const;
type ClientParam = (typeof CLIENT_PARAMS)[number];

/** The placeholder of one of the client's parameters. */
const clientAt = (name: ClientParam): string => `$${CLIENT_PARAMS.indexOf(name) + 1}`;

const CLIENT_IS = `id = ${clientAt("id")} AND client_id = ${clientAt("clientId")} AND secret_hash = ${clientAt("secretHash")}
  AND disabled = 0 AND grant_type = ${clientAt("grantType")} AND scope = ${clientAt("scope")}
  AND integration_user_id IS NOT DISTINCT FROM ${clientAt("integrationUserId")}::bigint`;

/**
 * True while the client is still the row it authenticated as (CLIENT_PARAMS) and enabled; locks that row FOR SHARE,
 * so a rotation or disable waits for the issuance to commit. Statements using it name their parameters with
 * clientStatement, which puts the client's first.
 */
export const CLIENT_STILL = `EXISTS (SELECT 1 FROM clients WHERE ${CLIENT_IS} FOR SHARE)`;

/** CLIENT_STILL without the lock: what a plain read saw at its moment, which the write after it checks again. */
export const CLIENT_WAS = `EXISTS (SELECT 1 FROM clients WHERE ${CLIENT_IS})`;

/** The client's parameters in CLIENT_PARAMS order; all null without a client, which then matches no row. */
function clientParams(client: AuthenticatedClient | undefined): PgValue[] {
  return CLIENT_PARAMS.map((name) => client?.[name] ?? null);
}

/**
 * The parameter order of a statement that re-checks the client, as code: the client's (CLIENT_PARAMS) first, then
 * `names` in order. `$` gives a parameter's placeholder for the SQL text and `values` lays out the values to match.
 */
export interface ClientStatement<N extends string> {
  $(name: N | ClientParam): string;
  values(client: AuthenticatedClient | undefined, named: Readonly<Record<N, PgValue>>): PgValue[];
}

/** The ClientStatement whose own parameters, after the client's, are `names`. */
export function clientStatement<const N extends string>(names: readonly N[]): ClientStatement<N> {
  return {
    $(name) {
      const own = names.indexOf(name as N);
      return own >= 0 ? `$${CLIENT_PARAMS.length + own + 1}` : clientAt(name as ClientParam);
    },
    values: (client, named) => [...clientParams(client), ...names.map((name) => named[name])],
  };
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
    dpop_jkt: t.dpopJkt ?? null,
  })));
}

/** The issuance's audit row, if any, as a JSON array of zero or one for json_to_recordset(… AUDIT_RECORD). */
export function auditJson(audit: NewAuditEvent | undefined): string {
  if (!audit) return "[]";
  const { at, event, clientId, userId, ip, detail } = audit;
  return JSON.stringify([{ at, event, client_id: clientId, user_id: userId, ip, detail: detail === null ? null : JSON.stringify(detail) }]);
}

const TOKEN_COLUMNS = "token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at, parent_id, dpop_jkt";
const TOKEN_RECORD = `r(token_hash text, kind text, grant_type text, family_id text, client_id bigint, user_id bigint,
  scope text, issued_at bigint, expires_at bigint, parent_id bigint, dpop_jkt text)`;
const AUDIT_COLUMNS = "at, event, client_id, user_id, ip, detail";
const AUDIT_RECORD = "a(at bigint, event text, client_id text, user_id bigint, ip text, detail text)";

/** `INSERT INTO tokens` of the JSON rows in the parameter `placeholder` names, those for which `condition` holds. */
export function insertTokensSql(placeholder: string, condition = "true"): string {
  return `INSERT INTO tokens (${TOKEN_COLUMNS}) SELECT ${TOKEN_COLUMNS} FROM json_to_recordset(${placeholder}::text::json) AS ${TOKEN_RECORD}
    WHERE ${condition}`;
}

/** `INSERT INTO audit_events` of the JSON rows in the parameter `placeholder` names, when `condition` holds. */
export function insertAuditSql(placeholder: string, condition = "true"): string {
  return `INSERT INTO audit_events (${AUDIT_COLUMNS}) SELECT ${AUDIT_COLUMNS} FROM json_to_recordset(${placeholder}::text::json) AS ${AUDIT_RECORD}
    WHERE ${condition}`;
}

/** Tokens ($1) and their audit row ($2) in one statement, inside a transaction that has checked what it must. */
const INSERT_ISSUED = `WITH issued AS (${insertTokensSql("$1")}) ${insertAuditSql("$2")}`;

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
