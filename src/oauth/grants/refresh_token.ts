// grant_type=refresh_token (RFC 6749 §6): rotation, reuse detection (RFC 9700 §4.14.2) and an optional grace period.
import type { Deps } from "../../deps.ts";
import { nowSeconds } from "../../deps.ts";
import type { Params } from "../../http/body.ts";
import { isRegisteredRedirectUri } from "../../store/rows.ts";
import type { TokenClient } from "../../store/contract.ts";
import { announceAudit, audit, auditRow, type AuditFacts } from "../audit.ts";
import { invalidGrant, invalidRequest, unauthorizedClient } from "../errors.ts";
import { clientAuthenticationWithdrawn } from "../client_auth.ts";
import { type GrantRequest, type GrantResult, mintTokens } from "../issue_tokens.ts";
import { narrowScope } from "../scope.ts";
import { tokenKey } from "../token_keys.ts";

/**
 * The spec lists redirect_uri for refresh; RFC 6749 §6 does not, and standard libraries never send it. When sent it
 * must be one of the registered ones, exactly; when absent it is accepted unless the operator made it mandatory.
 */
function checkRedirectUri(deps: Deps, client: TokenClient, redirectUri: string | undefined): void {
  if (redirectUri === undefined) {
    if (deps.config.refreshRequiresRedirectUri) throw invalidRequest("Missing parameter: redirect_uri");
    return;
  }
  if (!isRegisteredRedirectUri(client, redirectUri)) {
    throw invalidGrant("redirect_uri does not match the registered one");
  }
}

/** Mints the new pair and rotates in one store transaction; the scope is fixed once the presented token is known. */
async function rotate(
  deps: Deps,
  options: { client: TokenClient; refreshHash: string; requested: string | undefined; now: number; ip: string; dpopJkt: string | undefined },
) {
  const { client, refreshHash, requested, now, ip, dpopJkt } = options;
  // Minted before the transaction because digests are async.
  const minted = await mintTokens(deps, { grantType: "refresh_token", scope: "", now, withRefresh: true, dpopJkt });
  const result = await deps.store.tokens.rotateRefresh({
    refreshHash,
    client,
    now,
    graceSeconds: deps.config.refreshGraceSeconds,
    next: (presented, retried) => {
      // RFC 6749 §6: the access token may be narrowed, never widened; the new refresh token keeps the
      // presented one's scope, so a later refresh can ask for the original scope again. Throwing rolls back.
      const scope = narrowScope(requested, presented.scope);
      const facts: AuditFacts = { clientId: client.clientId, userId: presented.userId, ip, detail: { scope, grace_retry: retried } };
      return {
        tokens: minted.rows.map((row) => ({
          ...row,
          scope: row.kind === "access" ? scope : presented.scope,
        })),
        // Written in the rotation's own transaction: no new pair without its audit row, and one commit.
        audit: auditRow(deps, "token_refreshed", facts),
        scope,
        facts,
      };
    },
  });
  return { result, minted };
}

/**
 * Exchanges a refresh token for a new access and refresh token; the presented one stops working. Presenting an
 * already rotated token outside the grace period revokes its whole family.
 * @throws OAuthError invalid_request, unauthorized_client, invalid_grant, invalid_scope
 */
export async function exchangeRefreshToken(
  deps: Deps,
  options: GrantRequest,
): Promise<GrantResult> {
  const { client, params, ip, dpopJkt } = options;
  if (client.grantType !== "authorization_code") {
    throw unauthorizedClient("This client is not registered for the refresh_token grant");
  }
  const presentedToken = params.refresh_token;
  if (presentedToken === undefined) throw invalidRequest("Missing parameter: refresh_token");
  checkRedirectUri(deps, client, params.redirect_uri);
  const now = nowSeconds(deps.clock);
  const refreshHash = await tokenKey(deps, presentedToken);
  const { result, minted } = await rotate(deps, { client, refreshHash, requested: params.scope, now, ip, dpopJkt });
  switch (result.status) {
    case "reused": {
      const { userId, familyId } = result.presented;
      await audit(deps, "refresh_reuse_detected", {
        clientId: client.clientId,
        userId,
        ip,
        detail: { family: familyId },
      });
      throw invalidGrant("The refresh token has already been used");
    }
    case "invalid": {
      // Read only on this path, so a rotation costs no extra round trip. Said only about this client's own refresh
      // token: another client's token, or an access token, must not tell its presenter anything about the user.
      const details = await deps.store.tokens.findByHash(refreshHash);
      if (details?.userDisabled && details.clientId === client.id && details.kind === "refresh") {
        throw invalidGrant("The user who approved this grant is disabled");
      }
      throw invalidGrant("The refresh token is invalid, expired or revoked");
    }
    case "client_changed":
      // Disabled, or the secret rotated, while this request was in flight: nothing was rotated.
      throw clientAuthenticationWithdrawn();
    case "user_disabled":
      throw invalidGrant("The user who approved this grant is disabled");
    case "ok":
      announceAudit(deps, "token_refreshed", result.plan.facts);
      return { minted, scope: result.plan.scope };
  }
}
