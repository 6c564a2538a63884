// Statements and parameters every issuing operation on PostgreSQL shares (tokens.ts, codes.ts, token_rotation.ts).
//
// Lock order, everywhere: clients and users rows, then the grant family, then token rows. Issuance takes the client,
// user and family rows FOR SHARE before it writes, and every revocation locks what it revokes by (the client, the
// user, the family) before the tokens; so whichever commits first, the other sees it: a revocation's later
// statement (a fresh snapshot under READ COMMITTED) finds the tokens an issuance committed, and an issuance that
// waited re-reads the row the revocation changed and refuses.
import type { PgQueryable, PgValue } from "./connect.ts";
import type { AuthenticatedClient, NewAuditEvent, NewToken, TokenOwner, Withdrawn } from "../contract.ts";

/** What CLIENT_STILL and CLIENT_WAS compare, in parameter order: $1 to $7 of every statement that uses them. */
const CLIENT_PARAMS = ["id", "clientId", "secretHash", "grantType", "scope", "integrationUserId", "requireDpop"] as const;
type ClientParam = (typeof CLIENT_PARAMS)[number];

/** The placeholder of one of the client's parameters. */
const clientAt = (name: ClientParam): string => `$${CLIENT_PARAMS.indexOf(name) + 1}`;

const CLIENT_IS = `id = ${clientAt("id")} AND client_id = ${clientAt("clientId")} AND secret_hash = ${clientAt("secretHash")}
  AND disabled = 0 AND grant_type = ${clientAt("grantType")} AND scope = ${clientAt("scope")}
  AND integration_user_id IS NOT DISTINCT FROM ${clientAt("integrationUserId")}::bigint
  AND require_dpop = ${clientAt("requireDpop")}::integer`;

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
  return CLIENT_PARAMS.map((name) => {
    const value = client?.[name] ?? null;
    return typeof value === "boolean" ? Number(value) : value;
  });
}

/**
 * The parameter order of a statement that re-checks the client, as code: the client's (CLIENT_PARAMS) first, then
 * `names` in order. `$` gives a parameter's placeholder for the SQL text and `values` lays out the values to match.
 */
export interface ClientStatement<N extends string> {
  $(name: N | ClientParam): string;
  values(client: AuthenticatedClient | undefined, named: Readonly<Record<N, PgValue>>): PgValue[];
  /** The number of the first placeholder after these, for parameters the statement adds behind them. */
  readonly after: number;
}

/** The ClientStatement whose own parameters, after the client's, are `names`. */
export function clientStatement<const N extends string>(names: readonly N[]): ClientStatement<N> {
  return {
    $(name) {
      const own = names.indexOf(name as N);
      return own >= 0 ? `$${CLIENT_PARAMS.length + own + 1}` : clientAt(name as ClientParam);
    },
    values: (client, named) => [...clientParams(client), ...names.map((name) => named[name])],
    after: CLIENT_PARAMS.length + names.length + 1,
  };
}

/**
 * An issuance's re-checks over a statement's placeholders (`id` the client's, `userId`, `familyId`), in lock order:
 * the client is still the row it authenticated as, its user is enabled (both hold when no client is given), and the
 * family is live (holds for none). `lock` takes each row FOR SHARE, so a rotation or disable waits for the issuance
 * to commit; without it each reads what the statement's snapshot saw.
 */
export function reChecks(p: { $(name: "id" | "userId" | "familyId"): string }, lock: boolean): ReChecks {
  const share = lock ? " FOR SHARE" : "";
  return {
    client: `(${p.$("id")}::bigint IS NULL OR ${lock ? CLIENT_STILL : CLIENT_WAS})`,
    user: `(${p.$("id")}::bigint IS NULL OR EXISTS (SELECT 1 FROM users WHERE id = ${p.$("userId")}::bigint
      AND disabled = 0${share}))`,
    family: `(${p.$("familyId")}::text IS NULL OR EXISTS (SELECT 1 FROM grant_families WHERE id = ${p.$("familyId")}
      AND revoked_at IS NULL${share}))`,
  };
}

/** The three re-checks of reChecks, each a SQL boolean. */
export interface ReChecks {
  client: string;
  user: string;
  family: string;
}

/** True when all of `checks` hold: one scalar subquery, which the planner evaluates in their (lock) order. */
export function allHold({ client, user, family }: ReChecks): string {
  return `(SELECT ${client} AND ${user} AND ${family})`;
}

/** The first re-check that failed, in SQLite's order (clientAndUserStill): the client, then the user. */
export function withdrawnOf(row: { client_ok?: unknown; user_ok?: unknown }): Withdrawn | undefined {
  if (row.client_ok !== true) return "client_changed";
  return row.user_ok === true ? undefined : "user_disabled";
}

/** A new token's own columns, in the order of their placeholders in a VALUES row, with their types. */
const TOKEN_OWN = [["token_hash", "text"], ["kind", "text"], ["grant_type", "text"], ["scope", "text"],
  ["issued_at", "bigint"], ["expires_at", "bigint"], ["dpop_jkt", "text"]] as const;
const AUDIT_COLUMNS = [["at", "bigint"], ["event", "text"], ["client_id", "text"], ["user_id", "bigint"], ["ip", "text"],
  ["detail", "text"]] as const;
const TOKEN_OWN_NAMES = TOKEN_OWN.map(([name]) => name).join(", ");
const AUDIT_NAMES = AUDIT_COLUMNS.map(([name]) => name).join(", ");

/** One VALUES row of placeholders from $first on, cast to `columns`' types. */
function valuesRow(columns: readonly (readonly [string, string])[], first: number): string {
  return `(${columns.map(([, type], i) => `$${first + i}::${type}`).join(", ")})`;
}

/** SQL expressions (a statement's placeholders, or NULL) for the columns every token of one issuance shares. */
export interface OwnerSql {
  familyId: string;
  clientId: string;
  userId: string;
  parentId: string;
}

/**
 * An issuing statement over plain parameters: `count` new tokens as VALUES rows (their placeholders from $first on,
 * laid out by issuedValues) inserted when `condition` holds, then the audit row, when `audited`, only if they were.
 * It returns a row when the tokens were inserted and none otherwise. `ctes` (`name AS (…)`) come first, for a
 * condition that needs them. No json_to_recordset and no CTE beyond what the audit row needs: the checks and rows
 * passed that way cost the database about 40 µs more per token (bench/pg_statement_cpu.ts).
 */
export function issuingSql(options: {
  ctes?: readonly string[];
  count: number;
  first: number;
  owner: OwnerSql;
  condition: string;
  audited: boolean;
}): string {
  const { ctes = [], count, first, owner, condition, audited } = options;
  if (count < 1) throw new RangeError("issuingSql: an issuance inserts at least one token");
  const rows = Array.from({ length: count }, (_, n) => valuesRow(TOKEN_OWN, first + n * TOKEN_OWN.length));
  const insert = `INSERT INTO tokens (${TOKEN_OWN_NAMES}, family_id, client_id, user_id, parent_id)
  SELECT v.*, ${owner.familyId}, ${owner.clientId}, ${owner.userId}, ${owner.parentId}
  FROM (VALUES ${rows.join(", ")}) AS v(${TOKEN_OWN_NAMES}) WHERE ${condition} RETURNING 1`;
  if (!audited) return ctes.length === 0 ? insert : `WITH ${ctes.join(", ")} ${insert}`;
  return `WITH ${[...ctes, `issued AS (${insert})`].join(", ")}
  INSERT INTO audit_events (${AUDIT_NAMES})
  SELECT * FROM (VALUES ${valuesRow(AUDIT_COLUMNS, first + count * TOKEN_OWN.length)}) AS a
  WHERE EXISTS (SELECT 1 FROM issued) RETURNING 1`;
}

/** The values of issuingSql's VALUES rows, in placeholder order: each token's own columns, then the audit row's. */
export function issuedValues(tokens: readonly NewToken[], audit: NewAuditEvent | undefined): PgValue[] {
  const values: PgValue[] = [];
  for (const t of tokens) values.push(t.tokenHash, t.kind, t.grantType, t.scope, t.issuedAt, t.expiresAt, t.dpopJkt ?? null);
  if (audit) {
    const { at, event, clientId, userId, ip, detail } = audit;
    values.push(at, event, clientId, userId, ip, detail === null ? null : JSON.stringify(detail));
  }
  return values;
}

/** Inserts the tokens and the audit row of an issuance, in the caller's transaction that has checked what it must. */
export async function insertIssued(
  tx: PgQueryable,
  owner: TokenOwner,
  tokens: readonly NewToken[],
  audit?: NewAuditEvent,
): Promise<void> {
  if (tokens.length === 0 && !audit) return;
  const ownerSql = { familyId: "$1::text", clientId: "$2::bigint", userId: "$3::bigint", parentId: "$4::bigint" };
  const sql = tokens.length === 0
    ? `INSERT INTO audit_events (${AUDIT_NAMES}) VALUES ${valuesRow(AUDIT_COLUMNS, 1)}`
    : issuingSql({ count: tokens.length, first: 5, owner: ownerSql, condition: "true", audited: audit !== undefined });
  const ownerValues = tokens.length === 0 ? [] : [owner.familyId, owner.clientId, owner.userId, owner.parentId];
  await tx.query(sql, [...ownerValues, ...issuedValues(tokens, audit)]);
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
