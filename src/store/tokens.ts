// tokens table: access and refresh token digests, their lifetimes, revocation and refresh rotation.
import { createReadCache } from "./read_cache.ts";
import type { Db, Row } from "./sqlite.ts";
import { type AuthorizationCode, consumeCodeRow, type ConsumeResult, revokeFamilyRows } from "./codes.ts";
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

/** A live access token as the bearer check returns it: its details plus the acting user's organization ids. */
export interface ActiveAccess extends TokenDetails {
  /** Ids of the organizations the acting user belongs to, ascending; read in the same query as the token. */
  readonly organizationIds: readonly number[];
}

export interface NewToken {
  tokenHash: string;
  kind: TokenKind;
  grantType: TokenGrantType;
  scope: string;
  issuedAt: number;
  expiresAt: number;
}

export interface IssueInput {
  clientId: number;
  userId: number;
  /** The grant family (approval) the tokens descend from; null for client credentials. */
  familyId: string | null;
  tokens: NewToken[];
  /** An audit row written in the same transaction: one commit per issuance instead of two, and never a token without its row. */
  audit?: NewAuditEvent;
}

export interface RotateInput {
  refreshHash: string;
  /** Internal id of the authenticated client; a refresh token of another client is invalid. */
  clientId: number;
  now: number;
  graceSeconds: number;
  /**
   * Computes the new pair from the presented refresh token (scope narrowing happens here), and the audit row the
   * rotation writes with it; `retried` is true for a grace-period retry. Returning undefined refuses; throwing
   * rolls the whole rotation back.
   */
  next: (presented: TokenRecord, retried: boolean) => { tokens: NewToken[]; audit?: NewAuditEvent } | undefined;
}

export type RotateResult =
  | { status: "ok"; presented: TokenRecord; retried: boolean }
  /** The token had already been rotated outside the grace period: its whole family is now revoked. */
  | { status: "reused"; presented: TokenRecord }
  /** Unknown, another client's, expired, revoked, or refused by `next`. */
  | { status: "invalid" };

export type ExchangeResult =
  /** `issued` is false when `decide` refused or the approval's family had been revoked. */
  | { status: "ok"; code: AuthorizationCode; issued: boolean }
  | Exclude<ConsumeResult, { status: "ok" }>;

/** What the code exchange learns inside its transaction, for checks that need the database. */
export interface ExchangeFacts {
  userDisabled: boolean;
}

export type RevokeResult = { status: "revoked" | "unknown"; kind?: TokenKind } | { status: "other_client" };

export interface TokenStore {
  /**
   * Inserts the tokens in one transaction. Returns false (inserting nothing) when the family has been revoked
   * meanwhile, e.g. by a replay of the code racing the first exchange.
   */
  issue(input: IssueInput): Promise<boolean>;
  /**
   * Consumes an authorization code and inserts the tokens `decide` returns for it, in one transaction: of two
   * concurrent exchanges exactly one is issued tokens, and a replay revokes them (RFC 6749 §4.1.2). The code is
   * used up even when `decide` refuses (returns undefined).
   */
  exchangeCode(
    codeHash: string,
    now: number,
    decide: (code: AuthorizationCode, facts: ExchangeFacts) => { tokens: NewToken[]; audit?: NewAuditEvent } | undefined,
  ): Promise<ExchangeResult>;
  /** Any token by digest, live or not, with its client and user. */
  findByHash(tokenHash: string): Promise<TokenDetails | undefined>;
  /** The access token if it is unexpired, unrevoked, and its client and user are enabled; the bearer check. */
  findActiveAccess(tokenHash: string, now: number): Promise<ActiveAccess | undefined>;
  /** Refresh-token rotation as one transaction: single-use, reuse detection, optional grace period. */
  rotateRefresh(input: RotateInput): Promise<RotateResult>;
  /**
   * Revokes a token presented by client `clientId`: an access token alone, a refresh token with its whole family
   * (RFC 7009 §2.1). Unknown or already dead tokens report "unknown"; another client's are left alone.
   */
  revoke(tokenHash: string, clientId: number, now: number): Promise<RevokeResult>;
  /** Revokes every family and token the user granted to the client (the "revoke access" button). */
  revokeUserClient(userId: number, clientId: number, now: number): Promise<number>;
  /** Counts tokens (all states); for metrics and tests. */
  count(): Promise<number>;
}

function toRecord(row: Row): TokenRecord {
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

function toDetails(row: Row): TokenDetails {
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

const DETAIL_COLUMNS = `t.*, c.client_id AS client_public_id, c.name AS client_name, c.disabled AS client_disabled,
  u.username AS username, u.kind AS user_kind, u.disabled AS user_disabled`;
const DETAIL_TABLES = "tokens t JOIN clients c ON c.id = t.client_id JOIN users u ON u.id = t.user_id";
const DETAILS = `SELECT ${DETAIL_COLUMNS} FROM ${DETAIL_TABLES}`;

// The memberships ride along as a JSON array, so a GraphQL request reads the token and its scope in one query
// (one WAL read transaction) instead of two.
const ACTIVE_ACCESS = `SELECT ${DETAIL_COLUMNS},
  (SELECT json_group_array(organization_id) FROM (SELECT m.organization_id FROM memberships m
    WHERE m.user_id = t.user_id ORDER BY m.organization_id)) AS organization_ids
  FROM ${DETAIL_TABLES} WHERE t.token_hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > ?
  AND c.disabled = 0 AND u.disabled = 0`;

/** Live access tokens kept between writes; each entry is a token some client presented since the last write. */
const ACTIVE_ACCESS_CACHE_ENTRIES = 4096;

export function createTokenStore(db: Db): TokenStore {
  const activeAccess = createReadCache<ActiveAccess>(db, ACTIVE_ACCESS_CACHE_ENTRIES);
  const insertToken = (
    input: { clientId: number; userId: number; familyId: string | null; parentId: number | null },
    t: NewToken,
  ) =>
    db.prepare(
      `INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at,
      expires_at, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
      .run(
        t.tokenHash,
        t.kind,
        t.grantType,
        input.familyId,
        input.clientId,
        input.userId,
        t.scope,
        t.issuedAt,
        t.expiresAt,
        input.parentId,
      );

  // Every issuing operation stores its tokens together with the audit row of the issuance, in one transaction.
  const insertIssued = (owner: Parameters<typeof insertToken>[0], tokens: readonly NewToken[], audit?: NewAuditEvent) => {
    for (const t of tokens) insertToken(owner, t);
    if (audit) insertAuditRow(db, audit);
  };

  const familyRevoked = (familyId: string) =>
    (db.prepare("SELECT revoked_at FROM grant_families WHERE id = ?").get(familyId) as Row | undefined)
      ?.revoked_at !== null;

  const childRotated = (parentId: number) =>
    db.prepare(
      "SELECT 1 AS x FROM tokens WHERE parent_id = ? AND kind = 'refresh' AND rotated_at IS NOT NULL",
    )
      .get(parentId) !== undefined;

  // Reuse of a rotated refresh token (RFC 9700 §4.14.2): revoke everything descending from the same approval.
  const reuse = (presented: TokenRecord, now: number): RotateResult => {
    if (presented.familyId !== null) revokeFamilyRows(db, presented.familyId, now, "refresh_reused");
    else db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").run(now, presented.id);
    return { status: "reused", presented };
  };

  return {
    async issue(input) {
      // Issuance is the hottest write: concurrent issuances share one commit (see Db.transactionBatched).
      return db.transactionBatched(() => {
        if (input.familyId !== null && familyRevoked(input.familyId)) return false;
        insertIssued({ ...input, parentId: null }, input.tokens, input.audit);
        return true;
      });
    },
    async exchangeCode(codeHash, now, decide) {
      // In the group commit like issue() and rotateRefresh(): each exchange runs alone in its savepoint, so of two
      // exchanges of one code the second still finds it consumed.
      return db.transactionBatched((): ExchangeResult => {
        const consumed = consumeCodeRow(db, codeHash, now);
        if (consumed.status !== "ok") return consumed;
        const { code } = consumed;
        const user = db.prepare("SELECT disabled FROM users WHERE id = ?").get(code.userId) as
          | Row
          | undefined;
        const plan = decide(code, { userDisabled: user?.disabled !== 0 });
        if (!plan || familyRevoked(code.familyId)) return { status: "ok", code, issued: false };
        const owner = {
          clientId: code.clientId,
          userId: code.userId,
          familyId: code.familyId,
          parentId: null,
        };
        insertIssued(owner, plan.tokens, plan.audit);
        return { status: "ok", code, issued: true };
      });
    },
    async findByHash(tokenHash) {
      const row = db.prepare(`${DETAILS} WHERE t.token_hash = ?`).get(tokenHash) as Row | undefined;
      return row && toDetails(row);
    },
    async findActiveAccess(tokenHash, now) {
      // Every GraphQL request asks this. While nothing is written the answer is kept (read_cache.ts); the expiry,
      // the one condition that changes without a write, is checked again on every hit.
      const found = activeAccess.read(tokenHash, () => {
        const row = db.prepare(ACTIVE_ACCESS).get(tokenHash, now) as Row | undefined;
        if (!row) return undefined;
        const organizationIds = Object.freeze(JSON.parse(String(row.organization_ids)) as number[]);
        // Shared by every request presenting the token: frozen, so no caller can alter what the next one sees.
        return Object.freeze({ ...toDetails(row), organizationIds });
      });
      return found && found.expiresAt > now ? found : undefined;
    },
    async rotateRefresh({ refreshHash, clientId, now, graceSeconds, next }) {
      // Shares a commit with concurrent issuances and rotations like issue(); each runs in its own savepoint, one
      // after another, so two rotations of one token still see each other exactly as two transactions would.
      return db.transactionBatched((): RotateResult => {
        const row = db.prepare("SELECT * FROM tokens WHERE token_hash = ? AND kind = 'refresh'").get(
          refreshHash,
        ) as
          | Row
          | undefined;
        if (!row) return { status: "invalid" };
        const presented = toRecord(row);
        if (presented.clientId !== clientId || presented.revokedAt !== null || presented.expiresAt <= now) {
          return { status: "invalid" };
        }
        let retried = false;
        if (presented.rotatedAt !== null) {
          if (graceSeconds <= 0 || now - presented.rotatedAt > graceSeconds) return reuse(presented, now);
          // A child refresh token that was itself rotated proves the client did receive the pair: this is reuse.
          if (childRotated(presented.id)) return reuse(presented, now);
          // Grace retry: the client lost the previous response. Kill the pair it never received, issue anew.
          db.prepare("UPDATE tokens SET revoked_at = ? WHERE parent_id = ? AND revoked_at IS NULL").run(
            now,
            presented.id,
          );
          retried = true;
        }
        const plan = next(presented, retried);
        if (!plan) return { status: "invalid" };
        if (!retried) db.prepare("UPDATE tokens SET rotated_at = ? WHERE id = ?").run(now, presented.id);
        const owner = {
          clientId,
          userId: presented.userId,
          familyId: presented.familyId,
          parentId: presented.id,
        };
        insertIssued(owner, plan.tokens, plan.audit);
        return { status: "ok", presented, retried };
      });
    },
    async revoke(tokenHash, clientId, now) {
      return db.transaction((): RevokeResult => {
        const row = db.prepare("SELECT * FROM tokens WHERE token_hash = ?").get(tokenHash) as Row | undefined;
        if (!row) return { status: "unknown" };
        const token = toRecord(row);
        if (token.clientId !== clientId) return { status: "other_client" };
        if (token.revokedAt !== null || token.expiresAt <= now) {
          return { status: "unknown", kind: token.kind };
        }
        if (token.kind === "refresh" && token.familyId !== null) {
          revokeFamilyRows(db, token.familyId, now, "refresh_revoked");
        } else {
          db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").run(now, token.id);
        }
        return { status: "revoked", kind: token.kind };
      });
    },
    async revokeUserClient(userId, clientId, now) {
      return db.transaction(() => {
        db.prepare(`UPDATE grant_families SET revoked_at = ?, revoked_reason = 'user_revoked'
          WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL`).run(now, userId, clientId);
        const changes = db.prepare(
          "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL",
        )
          .run(now, userId, clientId).changes;
        db.prepare("DELETE FROM consents WHERE user_id = ? AND client_id = ?").run(userId, clientId);
        return Number(changes);
      });
    },
    async count() {
      return Number((db.prepare("SELECT COUNT(*) AS n FROM tokens").get() as Row).n);
    },
  };
}
