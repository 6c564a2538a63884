// tokens table: access and refresh token digests, their lifetimes, revocation and refresh rotation.
import { createReadCache, type ReadView } from "./read_cache.ts";
import type { Db, Row } from "./database.ts";
import type { ActiveAccess, IssueOutcome, RevokeResult, TokenStore } from "../contract.ts";
import { consumeCodeRow, revokeFamilyRows } from "./codes.ts";
import { familyRevoked, insertIssued } from "./token_rows.ts";
import { DETAIL_COLUMNS, DETAIL_TABLES, toDetails, toRecord } from "../rows.ts";
import { rotateRefreshRows } from "./token_rotation.ts";
import { clientAndUserStill } from "./still_authorized.ts";

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
