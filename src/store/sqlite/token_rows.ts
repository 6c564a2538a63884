// Rows of the tokens table as records, and the writes every issuing operation shares (tokens.ts, token_rotation.ts).
import type { Db, MappedRow, Row } from "./database.ts";
import { insertAuditRow, type NewAuditEvent } from "./audit.ts";

export type TokenKind = "access" | "refresh";
export type TokenGrantType = "authorization_code" | "refresh_token" | "client_credentials";

export interface TokenRecord {
  id: number;
  kind: TokenKind;
  grantType: TokenGrantType;
  familyId: string | null;
  /** Internal client row id. */
  clientId: number;
  userId: number;
  scope: string;
  issuedAt: number;
  expiresAt: number;
  revokedAt: number | null;
  rotatedAt: number | null;
}

/** A token joined with what introspection, token info and bearer checks need to know about it. */
export interface TokenDetails extends TokenRecord {
  /** Public OAuth client_id. */
  clientPublicId: string;
  clientName: string;
  clientDisabled: boolean;
  username: string;
  userKind: "person" | "integration";
  userDisabled: boolean;
}

export interface NewToken {
  tokenHash: string;
  kind: TokenKind;
  grantType: TokenGrantType;
  scope: string;
  issuedAt: number;
  expiresAt: number;
}

/** Whom new tokens belong to, and the refresh token they replace (rotation) if any. */
/** The tokens a grant decided to issue, with the audit row written in the same transaction. */
export interface IssuePlan {
  tokens: NewToken[];
  audit?: NewAuditEvent;
}

export interface TokenOwner {
  clientId: number;
  userId: number;
  familyId: string | null;
  parentId: number | null;
}

export function toRecord(row: MappedRow): TokenRecord {
  return {
    id: Number(row.id),
    kind: row.kind === "refresh" ? "refresh" : "access",
    grantType: row.grant_type as TokenGrantType,
    familyId: row.family_id === null ? null : String(row.family_id),
    clientId: Number(row.client_id),
    userId: Number(row.user_id),
    scope: String(row.scope),
    issuedAt: Number(row.issued_at),
    expiresAt: Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
  };
}

export function toDetails(row: MappedRow): TokenDetails {
  return {
    ...toRecord(row),
    clientPublicId: String(row.client_public_id),
    clientName: String(row.client_name),
    clientDisabled: row.client_disabled === 1,
    username: String(row.username),
    userKind: row.user_kind === "integration" ? "integration" : "person",
    userDisabled: row.user_disabled === 1,
  };
}

/** Every issuing operation stores its tokens together with the audit row of the issuance, in its transaction. */
export function insertIssued(db: Db, owner: TokenOwner, tokens: readonly NewToken[], audit?: NewAuditEvent): void {
  const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope,
    issued_at, expires_at, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const t of tokens) {
    insert.run(t.tokenHash, t.kind, t.grantType, owner.familyId, owner.clientId, owner.userId, t.scope, t.issuedAt,
      t.expiresAt, owner.parentId);
  }
  if (audit) insertAuditRow(db, audit);
}

/** True when the approval was revoked (or never existed): nothing may be issued into it any more. */
export function familyRevoked(db: Db, familyId: string): boolean {
  return (db.prepare("SELECT revoked_at FROM grant_families WHERE id = ?").get(familyId) as Row | undefined)
    ?.revoked_at !== null;
}
