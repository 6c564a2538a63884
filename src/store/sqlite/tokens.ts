// tokens table: access and refresh token digests, their lifetimes, revocation and refresh rotation.
import { createReadCache, type ReadView } from "./read_cache.ts";
import type { Db, Row } from "./database.ts";
import { type AuthorizationCode, consumeCodeRow, type ConsumeResult, revokeFamilyRows } from "./codes.ts";
import type { NewAuditEvent } from "./audit.ts";
import type { OrganizationIds } from "./fields.ts";
import {
  familyRevoked,
  insertIssued,
  type IssuePlan,
  type NewToken,
  toDetails,
  toRecord,
  type TokenDetails,
  type TokenKind,
} from "./token_rows.ts";
import { type RotateInput, type RotateResult, rotateRefreshRows } from "./token_rotation.ts";
import { type AuthenticatedClient, clientAndUserStill, type Withdrawn } from "./still_authorized.ts";

export type { IssuePlan, NewToken, TokenDetails, TokenGrantType, TokenKind, TokenRecord } from "./token_rows.ts";
export type { RotateInput, RotateResult } from "./token_rotation.ts";

/** A live access token as the bearer check returns it: its details plus the acting user's organization ids. */
export interface ActiveAccess extends TokenDetails {
  /** Ids of the organizations the acting user belongs to, ascending; read in the same query as the token. */
  readonly organizationIds: OrganizationIds;
}

export interface IssueInput {
  clientId: number;
  userId: number;
  /** The grant family (approval) the tokens descend from; null for client credentials. */
  familyId: string | null;
  tokens: NewToken[];
  /** An audit row written in the same transaction: one commit per issuance instead of two, and never a token without its row. */
  audit?: NewAuditEvent;
  /**
   * The client as it authenticated. When given, the tokens are inserted only if, inside the transaction, it still
   * has that secret and is enabled and the user is enabled: a `clients rotate-secret --revoke-tokens` or
   * `users disable` that commits while the request is in flight would otherwise miss them (still_authorized.ts).
   */
  authenticated?: AuthenticatedClient;
}

/** What issue() did: inserted the tokens, or nothing, and why. */
export type IssueOutcome = "issued" | "family_revoked" | Withdrawn;

/** A grant's verdict on a consumed code: issue the plan's tokens, or refuse for a reason the result carries back. */
export type CodeDecision<P extends IssuePlan, R> = { issue: P } | { refuse: R };

export type ExchangeResult<P extends IssuePlan = IssuePlan, R = unknown> =
  | { status: "issued"; code: AuthorizationCode; plan: P }
  /** `decide` refused; the code is used up all the same. */
  | { status: "refused"; code: AuthorizationCode; reason: R }
  /** The approval's family had been revoked (a replay of the code, a user revoking access): nothing was issued. */
  | { status: "family_revoked"; code: AuthorizationCode }
  | Exclude<ConsumeResult, { status: "ok" }>;

/** What the code exchange learns inside its transaction, for checks that need the database. */
export interface ExchangeFacts {
  userDisabled: boolean;
  /** The client's secret was rotated, or the client disabled, since it authenticated for this exchange. */
  clientChanged: boolean;
}

export type RevokeResult = { status: "revoked" | "unknown"; kind?: TokenKind } | { status: "other_client" };

export interface TokenStore {
  /**
   * Inserts the tokens in one transaction. Inserts nothing when the family has been revoked meanwhile (e.g. by a
   * replay of the code racing the first exchange), or when `authenticated` no longer holds.
   */
  issue(input: IssueInput): Promise<IssueOutcome>;
  /**
   * Consumes an authorization code and inserts the tokens `decide` plans for it, in one transaction: of two
   * concurrent exchanges exactly one is issued tokens, and a replay revokes them (RFC 6749 §4.1.2). The code is
   * used up even when `decide` refuses. Another client's code is "missing": untouched. `decide` runs inside the
   * transaction, on the rows it read; a PostgreSQL transaction run again (a deadlock victim) calls it again.
   */
  exchangeCode<P extends IssuePlan, R>(
    codeHash: string,
    client: AuthenticatedClient,
    now: number,
    decide: (code: AuthorizationCode, facts: ExchangeFacts) => CodeDecision<P, R>,
  ): Promise<ExchangeResult<P, R>>;
  /** Any token by digest, live or not, with its client and user. */
  findByHash(tokenHash: string): Promise<TokenDetails | undefined>;
  /** The access token if it is unexpired, unrevoked, and its client and user are enabled; the bearer check. */
  findActiveAccess(tokenHash: string, now: number): Promise<ActiveAccess | undefined>;
  /** Refresh-token rotation as one transaction: single-use, reuse detection, optional grace period. */
  rotateRefresh<P extends IssuePlan>(input: RotateInput<P>): Promise<RotateResult<P>>;
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

/** The columns toDetails maps, over DETAIL_TABLES; shared with the PostgreSQL store, whose tables are the same. */
export const DETAIL_COLUMNS = `t.*, c.client_id AS client_public_id, c.name AS client_name, c.disabled AS client_disabled,
  u.username AS username, u.kind AS user_kind, u.disabled AS user_disabled`;
export const DETAIL_TABLES = "tokens t JOIN clients c ON c.id = t.client_id JOIN users u ON u.id = t.user_id";
const DETAILS = `SELECT ${DETAIL_COLUMNS} FROM ${DETAIL_TABLES}`;

// The memberships ride along as a JSON array, so a GraphQL request reads the token and its scope in one query
// (one WAL read transaction) instead of two.
const ACTIVE_ACCESS = `SELECT ${DETAIL_COLUMNS},
  (SELECT json_group_array(organization_id) FROM (SELECT m.organization_id FROM memberships m
    WHERE m.user_id = t.user_id ORDER BY m.organization_id)) AS organization_ids
  FROM ${DETAIL_TABLES} WHERE t.token_hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > ?
  AND c.disabled = 0 AND u.disabled = 0`;

/**
 * Live access tokens kept between writes; each entry is a token some client presented since the last write. Keys
 * are token digests, 80 characters at most.
 */
const ACTIVE_ACCESS_CACHE = { maxEntries: 4096, maxKeyLength: 128 };

export function createTokenStore(db: Db, currentView: () => ReadView): TokenStore {
  const activeAccess = createReadCache<ActiveAccess>(db, ACTIVE_ACCESS_CACHE);
  return {
    async issue(input) {
      // Issuance is the hottest write: concurrent issuances share one commit (see Db.transactionBatched).
      return db.transactionBatched((): IssueOutcome => {
        if (input.familyId !== null && familyRevoked(db, input.familyId)) return "family_revoked";
        const withdrawn = input.authenticated && clientAndUserStill(db, input.authenticated, input.userId);
        if (withdrawn) return withdrawn;
        insertIssued(db, { ...input, parentId: null }, input.tokens, input.audit);
        return "issued";
      });
    },
    async exchangeCode(codeHash, client, now, decide) {
      // In the group commit like issue() and rotateRefresh(): each exchange runs alone in its savepoint, so of two
      // exchanges of one code the second still finds it consumed.
      return db.transactionBatched(() => {
        const consumed = consumeCodeRow(db, codeHash, client.id, now);
        if (consumed.status !== "ok") return consumed;
        const { code } = consumed;
        const withdrawn = clientAndUserStill(db, client, code.userId);
        const decision = decide(code, { userDisabled: withdrawn === "user_disabled", clientChanged: withdrawn === "client_changed" });
        if ("refuse" in decision) return { status: "refused", code, reason: decision.refuse };
        if (familyRevoked(db, code.familyId)) return { status: "family_revoked", code };
        const owner = { clientId: code.clientId, userId: code.userId, familyId: code.familyId, parentId: null };
        insertIssued(db, owner, decision.issue.tokens, decision.issue.audit);
        return { status: "issued", code, plan: decision.issue };
      });
    },
    async findByHash(tokenHash) {
      const row = db.prepare(`${DETAILS} WHERE t.token_hash = ?`).get(tokenHash) as Row | undefined;
      return row && toDetails(row);
    },
    async findActiveAccess(tokenHash, now) {
      // Every GraphQL request asks this. While nothing is written the answer is kept (read_cache.ts); the expiry,
      // the one condition that changes without a write, is checked again on every hit.
      const found = activeAccess.read(currentView(), tokenHash, () => {
        const row = db.prepare(ACTIVE_ACCESS).get(tokenHash, now) as Row | undefined;
        if (!row) return undefined;
        const organizationIds = Object.freeze(JSON.parse(String(row.organization_ids)) as number[]);
        // Shared by every request presenting the token: frozen, so no caller can alter what the next one sees.
        return Object.freeze({ ...toDetails(row), organizationIds });
      });
      return found && found.expiresAt > now ? found : undefined;
    },
    async rotateRefresh(input) {
      // Shares a commit with concurrent issuances and rotations like issue(); each runs in its own savepoint, one
      // after another, so two rotations of one token still see each other exactly as two transactions would.
      return db.transactionBatched(() => rotateRefreshRows(db, input));
    },
    async revoke(tokenHash, clientId, now) {
      return db.transactionBatched((): RevokeResult => {
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
      return db.transactionBatched(() => {
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
