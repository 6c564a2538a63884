// Refresh-token rotation inside one transaction: single use, reuse detection (RFC 9700 §4.14.2), grace retries.
import type { Db, Row } from "./database.ts";
import { revokeFamilyRows } from "./codes.ts";
import { isImportedFamily } from "../imports.ts";
import { familyRevoked, insertIssued } from "./token_rows.ts";
import type { IssuePlan, RotateInput, RotateResult, TokenRecord } from "../contract.ts";
import { toRecord } from "../rows.ts";
import { clientAndUserStill } from "./still_authorized.ts";

/** The rotation's reads and writes; the caller runs it inside a transaction (TokenStore.rotateRefresh). */
export function rotateRefreshRows<P extends IssuePlan>(db: Db, input: RotateInput<P>): RotateResult<P> {
  const { refreshHash, client, now, graceSeconds, next } = input;
  const clientId = client.id;
  const row = db.prepare("SELECT * FROM tokens WHERE token_hash = ? AND kind = 'refresh'").get(refreshHash) as
    | Row
    | undefined;
  if (!row) return { status: "invalid" };
  const presented = toRecord(row);
  if (presented.clientId !== clientId || presented.expiresAt <= now) return { status: "invalid" };
  if (presented.revokedAt !== null) {
    // A pair killed by a grace retry was presented after all: its response was not lost, so whoever retried
    // was not this client. RFC 9700 §4.14.2: an invalidated refresh token presented means a breach; revoke.
    return supersededByRetry(db, row, presented) ? reuse(db, presented, now) : { status: "invalid" };
  }
  let retried = false;
  if (presented.rotatedAt !== null) {
    if (graceSeconds <= 0 || now - presented.rotatedAt > graceSeconds) return reuse(db, presented, now);
    // Within the window one retry is granted, for a client that lost the response. It is reuse instead when the
    // client did receive the pair (its refresh token was itself rotated), or when the retry was already spent (a
    // second child exists): a thief replaying a just-rotated token must not mint pairs for the whole window.
    const children = childrenOf(db, presented.id);
    if (children.rotated || children.count > 1) return reuse(db, presented, now);
    retried = true;
  }
  // After reuse detection, which revokes whatever the client's state, and before anything is written.
  const withdrawn = clientAndUserStill(db, client, presented.userId);
  if (withdrawn) return { status: withdrawn };
  // Grace retry: the client lost the previous response. Kill the pair it never received, issue anew.
  if (retried) db.prepare("UPDATE tokens SET revoked_at = ? WHERE parent_id = ? AND revoked_at IS NULL").run(now, presented.id);
  const plan = next(presented, retried);
  if (!plan) return { status: "invalid" };
  if (!retried) db.prepare("UPDATE tokens SET rotated_at = ? WHERE id = ?").run(now, presented.id);
  // An imported Doorkeeper pair (rotated, its successor not yet used) is two live refresh tokens in one family: the
  // one not presented is spent too, so whichever the client holds refreshes once and the other is then reuse.
  if (!retried && isImportedFamily(presented.familyId)) {
    db.prepare(`UPDATE tokens SET rotated_at = ? WHERE family_id = ? AND kind = 'refresh' AND rotated_at IS NULL
      AND revoked_at IS NULL`).run(now, presented.familyId);
  }
  const owner = { clientId, userId: presented.userId, familyId: presented.familyId, parentId: presented.id };
  insertIssued(db, owner, plan.tokens, plan.audit);
  return { status: "ok", presented, retried, plan };
}

/** The refresh tokens issued in exchange for `parentId`: how many, and whether any was rotated in turn. */
function childrenOf(db: Db, parentId: number): { count: number; rotated: boolean } {
  const row = db.prepare(`SELECT COUNT(*) AS n, COALESCE(MAX(rotated_at IS NOT NULL), 0) AS rotated FROM tokens
    WHERE parent_id = ? AND kind = 'refresh'`).get(parentId) as Row;
  return { count: Number(row.n), rotated: Number(row.rotated) === 1 };
}

/**
 * True when `presented` is the refresh token of a pair a grace retry revoked: a later refresh token shares its
 * parent, and only a retry issues a second child. A token revoked otherwise (its family revoked, an admin revoking
 * it) is merely invalid.
 */
function supersededByRetry(db: Db, row: Row, presented: TokenRecord): boolean {
  const parentId = row.parent_id;
  if (typeof parentId !== "number" || presented.familyId === null) return false;
  if (familyRevoked(db, presented.familyId)) return false;
  return db.prepare("SELECT 1 FROM tokens WHERE parent_id = ? AND kind = 'refresh' AND id > ? LIMIT 1")
    .get(parentId, presented.id) !== undefined;
}

/** Reuse of a rotated refresh token: revoke everything descending from the same approval. */
function reuse(db: Db, presented: TokenRecord, now: number): { status: "reused"; presented: TokenRecord } {
  if (presented.familyId !== null) revokeFamilyRows(db, presented.familyId, now, "refresh_reused");
  else db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").run(now, presented.id);
  return { status: "reused", presented };
}
