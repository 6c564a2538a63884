// Rows of the tokens table as records, and the writes every issuing operation shares (tokens.ts, token_rotation.ts).
import type { Db, Row } from "./database.ts";
import type { NewAuditEvent, NewToken, TokenOwner } from "../contract.ts";
import { insertAuditRow } from "./audit.ts";

/** Every issuing operation stores its tokens together with the audit row of the issuance, in its transaction. */
export function insertIssued(db: Db, owner: TokenOwner, tokens: readonly NewToken[], audit?: NewAuditEvent): void {
  const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope,
    issued_at, expires_at, parent_id, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const t of tokens) {
    insert.run(t.tokenHash, t.kind, t.grantType, owner.familyId, owner.clientId, owner.userId, t.scope, t.issuedAt,
      t.expiresAt, owner.parentId, t.dpopJkt ?? null);
  }
  if (audit) insertAuditRow(db, audit);
}

/** True when the approval was revoked (or never existed): nothing may be issued into it any more. */
export function familyRevoked(db: Db, familyId: string): boolean {
  return (db.prepare("SELECT revoked_at FROM grant_families WHERE id = ?").get(familyId) as Row | undefined)
    ?.revoked_at !== null;
}
