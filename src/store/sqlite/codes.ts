// authorization_codes table (and the grant family each approval opens): issue once, consume once (the consuming
// happens in tokens.exchangeCode, in the transaction that issues the tokens).
import type { Db, Row } from "./database.ts";
import type { CodeStore, ConsumeResult } from "../contract.ts";
import { codeBasisHolds } from "./still_authorized.ts";
import { grantConsentRow } from "./consents.ts";
import { toCode } from "../rows.ts";

/** Revokes a family and every token in it; shared by code replay, refresh reuse and user revocation. */
export function revokeFamilyRows(db: Db, familyId: string, now: number, reason: string): number {
  db.prepare(
    "UPDATE grant_families SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
  )
    .run(now, reason, familyId);
  return Number(
    db.prepare("UPDATE tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL").run(
      now,
      familyId,
    ).changes,
  );
}

/**
 * Marks a code used with one conditional UPDATE … RETURNING; a code used before revokes its family. Must run
 * inside a transaction; shared with the token store's exchange, which issues tokens in the same transaction.
 *
 * Only the code's own client (`clientId`, its row id) can consume it or set off the replay revocation. Another
 * registered client holding a leaked code finds nothing (RFC 6749 §4.1.3): it could otherwise burn an unused
 * code, revoke the grant of a code already exchanged, and learn which of the two it was.
 */
export function consumeCodeRow(db: Db, codeHash: string, clientId: number, now: number): ConsumeResult {
  const won = db.prepare(
    "UPDATE authorization_codes SET used_at = ? WHERE code_hash = ? AND client_id = ? AND used_at IS NULL RETURNING *",
  )
    .get(now, codeHash, clientId) as Row | undefined;
  if (won) return { status: "ok", code: toCode(won) };
  const used = db.prepare("SELECT * FROM authorization_codes WHERE code_hash = ? AND client_id = ?").get(
    codeHash,
    clientId,
  ) as Row | undefined;
  if (!used) return { status: "missing" };
  const code = toCode(used);
  revokeFamilyRows(db, code.familyId, now, "code_reused");
  return { status: "reused", code };
}

export function createCodeStore(db: Db): CodeStore {
  return {
    async issue(c, basis) {
      return db.transactionBatched(() => {
        if (basis && !codeBasisHolds(db, basis, c)) return false;
        if (basis?.consent === "given") grantConsentRow(db, c.userId, c.clientId, c.scope, basis.now);
        db.prepare(
          "INSERT INTO grant_families (id, client_id, user_id, scope, created_at) VALUES (?, ?, ?, ?, ?)",
        )
          .run(c.familyId, c.clientId, c.userId, c.scope, c.issuedAt);
        db.prepare(
          `INSERT INTO authorization_codes (code_hash, family_id, client_id, user_id, redirect_uri, scope,
          code_challenge, code_challenge_method, issued_at, expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
          .run(
            c.codeHash,
            c.familyId,
            c.clientId,
            c.userId,
            c.redirectUri,
            c.scope,
            c.codeChallenge,
            c.codeChallenge === null ? null : "S256",
            c.issuedAt,
            c.expiresAt,
            c.dpopJkt ?? null,
          );
        return true;
      });
    },
  };
}
