// Refresh-token rotation on PostgreSQL: single use, reuse detection (RFC 9700 §4.14.2) and grace retries, with the
// decisions of SQLite's token_rotation.ts.
//
// The usual refresh (a live token never rotated before) costs two round trips: a read, then one statement that
// claims the token with a conditional UPDATE … WHERE rotated_at IS NULL and inserts the new pair only if it did,
// under FOR SHARE re-checks of client, user and family. Everything else (a lost race, a rotated or revoked token, a
// withdrawn client) is decided in a transaction that locks the family and then the presented token FOR UPDATE, so
// concurrent rotations of one token run one after another and each sees what the previous one committed.
import { isRetryable, type PgClient, type PgQueryable, type PgRow } from "./connect.ts";
import type { IssuePlan, RotateInput, RotateResult, TokenRecord } from "../contract.ts";
import { isImportedFamily } from "../imports.ts";
import { toRecord } from "../rows.ts";
import { allHold, CLIENT_STILL, CLIENT_WAS, clientStatement, insertIssued, issuedValues, issuingSql, reChecks, revokeFamily, withdrawnOf } from "./token_sql.ts";

const READ_P = clientStatement(["refreshHash"]);
const READ = `SELECT t.*, ${CLIENT_WAS} AS client_ok,
  EXISTS (SELECT 1 FROM users u WHERE u.id = t.user_id AND u.disabled = 0) AS user_ok
  FROM tokens t WHERE t.token_hash = ${READ_P.$("refreshHash")} AND t.kind = 'refresh'`;

// The re-checks (one scalar subquery, so in this order) run before the UPDATE locks the token, since its WHERE needs
// them: the locks follow the order client, user, family, token. The new pair is inserted, and the audit row written,
// only if the claim took the token (issuingSql). An imported Doorkeeper pair's other live refresh token is spent with
// it (see SQLite's rotateRefreshRows): that UPDATE is in the statement only for an imported family.
const CLAIM_P = clientStatement(["now", "tokenId", "userId", "familyId"]);
const CLAIMED = "EXISTS (SELECT 1 FROM claimed)";
const CLAIM_CTE = `claimed AS (UPDATE tokens SET rotated_at = ${CLAIM_P.$("now")}::bigint WHERE id = ${CLAIM_P.$("tokenId")}::bigint
    AND rotated_at IS NULL AND revoked_at IS NULL AND ${allHold(reChecks(CLAIM_P, true))}
    RETURNING id)`;
const PAIRED_CTE = `paired AS (UPDATE tokens SET rotated_at = ${CLAIM_P.$("now")}::bigint WHERE family_id = ${CLAIM_P.$("familyId")}
    AND kind = 'refresh' AND id <> ${CLAIM_P.$("tokenId")}::bigint AND rotated_at IS NULL AND revoked_at IS NULL AND ${CLAIMED})`;
const CLAIM_OWNER = { familyId: `${CLAIM_P.$("familyId")}::text`, clientId: `${CLAIM_P.$("id")}::bigint`,
  userId: `${CLAIM_P.$("userId")}::bigint`, parentId: `${CLAIM_P.$("tokenId")}::bigint` };

/** The claim of a refresh token and the insert of `plan`'s tokens: a row back when it took the token. */
function claimSql(plan: IssuePlan, imported: boolean): string {
  return issuingSql({
    ctes: imported ? [CLAIM_CTE, PAIRED_CTE] : [CLAIM_CTE],
    count: plan.tokens.length, first: CLAIM_P.after, owner: CLAIM_OWNER, condition: CLAIMED, audited: plan.audit !== undefined,
  });
}

// The locked path's first statement: the client and user FOR SHARE, then the family FOR UPDATE, so the statements
// after it see every write into the family committed before, and none can start until this ends.
const LOCK_P = clientStatement(["userId", "familyId"]);
const LOCK = `SELECT ${CLIENT_STILL} AS client_ok,
  EXISTS (SELECT 1 FROM users WHERE id = ${LOCK_P.$("userId")} AND disabled = 0 FOR SHARE) AS user_ok,
  (${LOCK_P.$("familyId")}::text IS NULL OR EXISTS (SELECT 1 FROM grant_families WHERE id = ${LOCK_P.$("familyId")}
    FOR UPDATE)) AS family_locked`;

// The presented token, locked, with what reuse detection asks about its children and siblings (childrenOf and
// supersededByRetry in SQLite's rotation) and whether its family was revoked (or is gone).
const PRESENTED = `SELECT t.*,
  (SELECT COUNT(*) FROM tokens c WHERE c.parent_id = t.id AND c.kind = 'refresh') AS children,
  EXISTS (SELECT 1 FROM tokens c WHERE c.parent_id = t.id AND c.kind = 'refresh' AND c.rotated_at IS NOT NULL) AS child_rotated,
  EXISTS (SELECT 1 FROM tokens s WHERE s.parent_id = t.parent_id AND s.kind = 'refresh' AND s.id > t.id) AS later_sibling,
  NOT EXISTS (SELECT 1 FROM grant_families f WHERE f.id = t.family_id AND f.revoked_at IS NULL) AS family_revoked
  FROM tokens t WHERE t.token_hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t`;

/** TokenStore.rotateRefresh on PostgreSQL; see the top of this file. */
export async function rotateRefreshPg<P extends IssuePlan>(pg: PgClient, input: RotateInput<P>): Promise<RotateResult<P>> {
  const { client, now } = input;
  const [row] = await pg.query(READ, READ_P.values(client, { refreshHash: input.refreshHash }));
  if (!row) return { status: "invalid" };
  const presented = toRecord(row);
  // The client, user and expiry of a token never change: these refusals need no lock.
  if (presented.clientId !== client.id || presented.expiresAt <= now) return { status: "invalid" };
  if (presented.revokedAt !== null || presented.rotatedAt !== null) return rotateLocked(pg, input, presented);
  // Read together: a client or user withdrawn by then is refused, as SQLite would have refused it at that moment.
  const withdrawn = withdrawnOf(row);
  if (withdrawn) return { status: withdrawn };
  const plan = input.next(presented, false);
  if (!plan) return { status: "invalid" };
  const params = [
    ...CLAIM_P.values(client, { now, tokenId: presented.id, userId: presented.userId, familyId: presented.familyId }),
    ...issuedValues(plan.tokens, plan.audit),
  ];
  // A deadlock victim's statement was rolled back whole (both refresh tokens of an imported pair presented at once
  // lock the two rows in opposite orders), so deciding again is safe.
  const claimed = await pg.query(claimSql(plan, isImportedFamily(presented.familyId)), params)
    .then((rows) => rows.length > 0, (error) => isRetryable(error) ? false : Promise.reject(error));
  if (claimed) return { status: "ok", presented, retried: false, plan };
  // Something changed since the read (most often a concurrent rotation of the same token): decide again, locked.
  return rotateLocked(pg, input, presented, plan);
}

/**
 * The rotation as SQLite decides it, in one transaction holding the family and the presented token. `unlocked` is
 * the token as first read (its user and family never change); `plan` what `next` returned for it, reused when the
 * outcome is a rotation that is not a retry.
 */
function rotateLocked<P extends IssuePlan>(
  pg: PgClient,
  input: RotateInput<P>,
  unlocked: TokenRecord,
  plan?: P,
): Promise<RotateResult<P>> {
  const { refreshHash, client, now, graceSeconds, next } = input;
  return pg.transaction(async (tx): Promise<RotateResult<P>> => {
    const [still] = await tx.query(LOCK, LOCK_P.values(client, { userId: unlocked.userId, familyId: unlocked.familyId }));
    const [row] = await tx.query(PRESENTED, [refreshHash]);
    if (!row) return { status: "invalid" };
    const presented = toRecord(row);
    if (presented.clientId !== client.id || presented.expiresAt <= now) return { status: "invalid" };
    if (presented.revokedAt !== null) {
      // A pair killed by a grace retry was presented after all: its response was not lost, so whoever retried was
      // not this client (RFC 9700 §4.14.2). Any other revoked token is merely invalid.
      return supersededByRetry(row, presented) ? reuse(tx, presented, now) : { status: "invalid" };
    }
    let retried = false;
    if (presented.rotatedAt !== null) {
      if (graceSeconds <= 0 || now - presented.rotatedAt > graceSeconds) return reuse(tx, presented, now);
      // One retry within the window, for a client that lost the response; reuse once the pair was received (its
      // refresh token rotated in turn) or the retry spent (a second child).
      if (row.child_rotated === true || Number(row.children) > 1) return reuse(tx, presented, now);
      retried = true;
    }
    const withdrawn = withdrawnOf(still ?? {});
    if (withdrawn) return { status: withdrawn };
    if (retried) await tx.query("UPDATE tokens SET revoked_at = $1 WHERE parent_id = $2 AND revoked_at IS NULL", [now, presented.id]);
    const chosen = !retried && plan ? plan : next(presented, retried);
    if (!chosen) return { status: "invalid" };
    if (!retried) {
      // An imported pair's other live refresh token is spent too (SQLite's rotateRefreshRows says why).
      await tx.query(`UPDATE tokens SET rotated_at = $1 WHERE id = $2 OR ($3::boolean AND family_id = $4 AND kind = 'refresh'
        AND rotated_at IS NULL AND revoked_at IS NULL)`, [now, presented.id, isImportedFamily(presented.familyId), presented.familyId]);
    }
    const owner = { clientId: client.id, userId: presented.userId, familyId: presented.familyId, parentId: presented.id };
    await insertIssued(tx, owner, chosen.tokens, chosen.audit);
    return { status: "ok", presented, retried, plan: chosen };
  });
}

/** True when `presented` is the refresh token of a pair a grace retry revoked (SQLite's supersededByRetry). */
function supersededByRetry(row: PgRow, presented: TokenRecord): boolean {
  return row.parent_id !== null && presented.familyId !== null && row.family_revoked !== true && row.later_sibling === true;
}

/** Reuse of a rotated refresh token: revoke everything descending from the same approval. */
async function reuse(tx: PgQueryable, presented: TokenRecord, now: number): Promise<{ status: "reused"; presented: TokenRecord }> {
  if (presented.familyId !== null) await revokeFamily(tx, presented.familyId, now, "refresh_reused");
  else await tx.query("UPDATE tokens SET revoked_at = $1 WHERE id = $2", [now, presented.id]);
  return { status: "reused", presented };
}
