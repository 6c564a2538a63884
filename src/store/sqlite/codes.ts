// authorization_codes table (and the grant family each approval opens): issue once, consume once (the consuming
// happens in tokens.exchangeCode, in the transaction that issues the tokens).
import type { Db, MappedRow, Row } from "./database.ts";
import { type CodeBasis, codeBasisHolds } from "./still_authorized.ts";
import { grantConsentRow } from "./consents.ts";

export interface AuthorizationCode {
  id: number;
  familyId: string;
  /** Internal client row id. */
  clientId: number;
  userId: number;
  redirectUri: string;
  scope: string;
  codeChallenge: string | null;
  codeChallengeMethod: "S256" | null;
  issuedAt: number;
  expiresAt: number;
  usedAt: number | null;
}

/** A code to store: its digest plus the approved request; the method is always S256 when a challenge is set. */
export type NewAuthorizationCode = Omit<AuthorizationCode, "id" | "codeChallengeMethod" | "usedAt"> & { codeHash: string };

export type ConsumeResult =
  | { status: "ok"; code: AuthorizationCode }
  /** The code had been used before; its whole grant family has now been revoked (RFC 6749 §4.1.2). */
  | { status: "reused"; code: AuthorizationCode }
  | { status: "missing" };

export interface CodeStore {
  /**
   * Opens a grant family for the approval and stores the code's digest, in one transaction. With a `basis`, only
   * while it still holds (a password change, a disable or a withdrawn consent that committed while the request
   * was in flight stops the code; still_authorized.ts), and a consent given just now is stored with the code.
   * @returns false when the basis no longer held and nothing was stored
   */
  issue(code: NewAuthorizationCode, basis?: CodeBasis): Promise<boolean>;
}

/** An authorization_codes row as an AuthorizationCode; the PostgreSQL store maps its rows with it too. */
export function toCode(row: MappedRow): AuthorizationCode {
  return {
    id: Number(row.id),
    familyId: String(row.family_id),
    clientId: Number(row.client_id),
    userId: Number(row.user_id),
    redirectUri: String(row.redirect_uri),
    scope: String(row.scope),
    codeChallenge: row.code_challenge === null ? null : String(row.code_challenge),
    codeChallengeMethod: row.code_challenge_method === "S256" ? "S256" : null,
    issuedAt: Number(row.issued_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
  };
}

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
          code_challenge, code_challenge_method, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
          );
        return true;
      });
    },
  };
}
