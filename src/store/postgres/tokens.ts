// tokens table on PostgreSQL: issuance, the code exchange, the bearer check, revocation (rotation: token_rotation.ts).
import type { PgClient, PgRow } from "./connect.ts";
import type { ActiveAccess, IssueOutcome, RevokeResult, TokenStore } from "../contract.ts";
import { DETAIL_COLUMNS, DETAIL_TABLES, TOKEN_COLUMNS, toCode, toDetails, toRecord } from "../rows.ts";
import { allHold, CLIENT_STILL, clientStatement, insertIssued, issuedValues, issuingSql, reChecks, revokeFamily, withdrawnOf }
  from "./token_sql.ts";
import { rotateRefreshPg } from "./token_rotation.ts";
import { ORGANIZATIONS_COLUMN, organizationsOf } from "./bearer_totals.ts";

// One statement, so a client-credentials token costs one round trip after the client lookup: the INSERT's condition
// re-checks the client, user and family rows, locking them in that order FOR SHARE (one scalar subquery, so the
// planner cannot reorder them), and the audit row is written only if tokens were (issuingSql).
const ISSUE_P = clientStatement(["userId", "familyId", "clientId"]);
// A remembered client's issuance (TokenClient.remembered) has its gate's key after the same parameters.
const REMEMBERED_P = clientStatement(["userId", "familyId", "clientId", "gate"]);
const ISSUE_CHECKS = reChecks(ISSUE_P, true);
const STILL_HOLDS = allHold(ISSUE_CHECKS);
const STILL_HOLDS_WITHOUT_FAMILY = allHold({ ...ISSUE_CHECKS, family: "true" });
/** A remembered client's gate holds no failures, as its authentication assumed; a null key names no counter. */
const GATE_CLEAN = `NOT EXISTS (SELECT 1 FROM throttle_counters WHERE key = ${REMEMBERED_P.$("gate")}::text AND failures > 0)`;
/**
 * The issuance's condition. Without a family (client credentials) the family's check is left out, and the gate's
 * unless the client was remembered: the executor sets up each check's lock and scan at every call, whether or not it
 * runs it (3 % of the issuance's instructions for the family's, bench/pg_instructions.ts).
 */
function stillHolds(withFamily: boolean, remembered: boolean): string {
  const checks = withFamily ? STILL_HOLDS : STILL_HOLDS_WITHOUT_FAMILY;
  return remembered ? `${checks} AND ${GATE_CLEAN}` : checks;
}
const ISSUE_OWNER = { familyId: `${ISSUE_P.$("familyId")}::text`, clientId: `${ISSUE_P.$("clientId")}::bigint`,
  userId: `${ISSUE_P.$("userId")}::bigint`, parentId: "NULL::bigint" };

/** Why an issuance inserted nothing, read after it: which of its re-checks fail now. */
const WHY_NOT_P = clientStatement(["userId", "familyId"]);
const WHY_NOT_CHECKS = reChecks(WHY_NOT_P, false);
const WHY_NOT = `SELECT ${WHY_NOT_CHECKS.client} AS client_ok, ${WHY_NOT_CHECKS.user} AS user_ok, ${WHY_NOT_CHECKS.family} AS family_ok`;

// The conditional UPDATE claims the code: of concurrent exchanges one gets the row, and the others wait for it to
// commit and then find it used. The code row is locked first, then the client, user and family FOR SHARE.
const CLAIM_CODE_P = clientStatement(["now", "codeHash"]);
const CLAIM_CODE = `WITH claimed AS (UPDATE authorization_codes SET used_at = ${CLAIM_CODE_P.$("now")}
    WHERE code_hash = ${CLAIM_CODE_P.$("codeHash")} AND client_id = ${CLAIM_CODE_P.$("id")} AND used_at IS NULL RETURNING *)
  SELECT claimed.*, ${CLIENT_STILL} AS client_ok,
    EXISTS (SELECT 1 FROM users u WHERE u.id = claimed.user_id AND u.disabled = 0 FOR SHARE) AS user_ok,
    EXISTS (SELECT 1 FROM grant_families f WHERE f.id = claimed.family_id AND f.revoked_at IS NULL FOR SHARE) AS family_ok
  FROM claimed`;

// One statement: the token, its client and user, and the acting user's organizations with their field counts
// (bearer_totals.ts). The client and the user come from scalar subqueries, null when disabled (or gone), which the
// store reads as no active token: 13 % fewer instructions per bearer check than joining them (bench/pg_instructions.ts).
const ACTIVE_ACCESS = `SELECT ${TOKEN_COLUMNS},
  (SELECT json_build_array(c.client_id, c.name) FROM clients c WHERE c.id = t.client_id AND c.disabled = 0) AS client,
  (SELECT json_build_array(u.username, u.kind) FROM users u WHERE u.id = t.user_id AND u.disabled = 0) AS person,
  ${ORGANIZATIONS_COLUMN}
  FROM tokens t WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > $2`;

/** The first of WHY_NOT's checks that fails, in SQLite's order (family, client, user); undefined when all hold. */
function refusalOf(row: PgRow | undefined): Exclude<IssueOutcome, "issued"> | undefined {
  return row?.family_ok !== true ? "family_revoked" : withdrawnOf(row);
}

export function createPgTokenStore(pg: PgClient): TokenStore {
  // Each shape's text built once: building a client-credentials issuance's text takes ~2.4 µs (measured alone), at
  // every token. Few shapes exist: the tokens per issuance, with or without a family, remembered or not, audited or not.
  const issuing = new Map<string, string>();
  const issuingText = (count: number, withFamily: boolean, remembered: boolean, audited: boolean): string => {
    const shape = `${count} ${withFamily} ${remembered} ${audited}`;
    let text = issuing.get(shape);
    if (text === undefined) {
      const first = (remembered ? REMEMBERED_P : ISSUE_P).after;
      text = issuingSql({ count, first, owner: ISSUE_OWNER, condition: stillHolds(withFamily, remembered), audited });
      issuing.set(shape, text);
    }
    return text;
  };
  return {
    async issue(input) {
      const { tokens, audit } = input;
      const remembered = input.authenticated?.remembered;
      const p = remembered ? REMEMBERED_P : ISSUE_P;
      const named = { userId: input.userId, familyId: input.familyId, clientId: input.clientId, gate: remembered?.gate ?? null };
      const owner = p.values(input.authenticated, named);
      const whyNot = async () =>
        refusalOf((await pg.query(WHY_NOT, WHY_NOT_P.values(input.authenticated, { userId: input.userId, familyId: input.familyId })))[0]);
      // Nothing to insert: the checks alone answer.
      if (tokens.length === 0) return await whyNot() ?? "issued";
      const sql = issuingText(tokens.length, input.familyId !== null, remembered !== undefined, audit !== undefined);
      const inserted = await pg.query(sql, [...owner, ...issuedValues(tokens, audit)]);
      if (inserted.length > 0) return "issued";
      // A remembered client's refusal is decided again on a fresh read (TokenClient.remembered): no need to ask why.
      if (remembered) return "client_changed";
      // A check refused. A change undone since (a client enabled again) leaves every check holding now: that
      // issuance was still refused, and answers as its client having changed.
      return await whyNot() ?? "client_changed";
    },
    async exchangeCode(codeHash, client, now, decide) {
      return pg.transaction(async (tx) => {
        const [won] = await tx.query(CLAIM_CODE, CLAIM_CODE_P.values(client, { now, codeHash }));
        if (!won) {
          const [used] = await tx.query("SELECT * FROM authorization_codes WHERE code_hash = $1 AND client_id = $2", [codeHash, client.id]);
          if (!used) return { status: "missing" } as const;
          const code = toCode(used);
          // A replay: RFC 6749 §4.1.2 asks to revoke what the code was exchanged for.
          await revokeFamily(tx, code.familyId, now, "code_reused");
          return { status: "reused", code } as const;
        }
        const code = toCode(won);
        const withdrawn = withdrawnOf(won);
        const decision = decide(code, { userDisabled: withdrawn === "user_disabled", clientChanged: withdrawn === "client_changed" });
        if ("refuse" in decision) return { status: "refused", code, reason: decision.refuse } as const;
        if (won.family_ok !== true) return { status: "family_revoked", code } as const;
        const owner = { clientId: code.clientId, userId: code.userId, familyId: code.familyId, parentId: null };
        await insertIssued(tx, owner, decision.issue.tokens, decision.issue.audit);
        return { status: "issued", code, plan: decision.issue } as const;
      });
    },
    async findByHash(tokenHash) {
      const [row] = await pg.query(`SELECT ${DETAIL_COLUMNS} FROM ${DETAIL_TABLES} WHERE t.token_hash = $1`, [tokenHash]);
      return row && toDetails(row);
    },
    async findActiveAccess(tokenHash, now) {
      const [row] = await pg.query(ACTIVE_ACCESS, [tokenHash, now]);
      if (!row || row.client === null || row.person === null) return undefined;
      const [clientPublicId, clientName] = row.client as [string, string];
      const [username, userKind] = row.person as [string, string];
      const details = toDetails({ ...row, client_public_id: clientPublicId, client_name: clientName, client_disabled: 0,
        username, user_kind: userKind, user_disabled: 0 });
      return Object.freeze({ ...details, organizationIds: organizationsOf(row.organizations) }) satisfies ActiveAccess;
    },
    rotateRefresh: (input) => rotateRefreshPg(pg, input),
    async revoke(tokenHash, clientId, now) {
      const [row] = await pg.query("SELECT * FROM tokens WHERE token_hash = $1", [tokenHash]);
      if (!row) return { status: "unknown" };
      const token = toRecord(row);
      if (token.clientId !== clientId) return { status: "other_client" };
      if (token.revokedAt !== null || token.expiresAt <= now) return { status: "unknown", kind: token.kind };
      const { familyId } = token;
      if (token.kind === "refresh" && familyId !== null) {
        await pg.transaction((tx) => revokeFamily(tx, familyId, now, "refresh_revoked"));
        return { status: "revoked", kind: token.kind };
      }
      // Conditional: a revocation that committed since the read above has already answered "revoked".
      const revoked = await pg.query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id", [now, token.id]);
      return { status: revoked.length ? "revoked" : "unknown", kind: token.kind } satisfies RevokeResult;
    },
    async revokeUserClient(userId, clientId, now) {
      return pg.transaction(async (tx) => {
        // Families first (the lock order), then their tokens in a statement of its own: see revokeFamily.
        await tx.query(`WITH forgotten AS (DELETE FROM consents WHERE user_id = $2 AND client_id = $3)
          UPDATE grant_families SET revoked_at = $1, revoked_reason = 'user_revoked'
          WHERE user_id = $2 AND client_id = $3 AND revoked_at IS NULL`, [now, userId, clientId]);
        const [row] = await tx.query(`WITH revoked AS (UPDATE tokens SET revoked_at = $1
          WHERE user_id = $2 AND client_id = $3 AND revoked_at IS NULL RETURNING 1) SELECT COUNT(*) AS n FROM revoked`,
          [now, userId, clientId]);
        return Number(row?.n);
      });
    },
    async count() {
      const [row] = await pg.query("SELECT COUNT(*) AS n FROM tokens");
      return Number(row?.n);
    },
  };
}
