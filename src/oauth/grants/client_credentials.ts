// grant_type=client_credentials (RFC 6749 §4.4): an access token acting as the client's integration user.
import type { Deps } from "../../deps.ts";
import { nowSeconds } from "../../deps.ts";
import type { Params } from "../../http/body.ts";
import type { TokenClient } from "../../store/contract.ts";
import { announceAudit, auditRow } from "../audit.ts";
import { invalidGrant, unauthorizedClient } from "../errors.ts";
import { type GrantRequest, type GrantResult, mintTokens } from "../issue_tokens.ts";
import { narrowScope } from "../scope.ts";
import { clientAuthenticationWithdrawn } from "../client_auth.ts";

/**
 * Issues an access token (never a refresh token, RFC 6749 §4.4.3) for the client's integration user; `scope` may
 * narrow the registered scope.
 * @throws OAuthError unauthorized_client, invalid_scope, invalid_grant (integration user missing or disabled)
 */
export async function issueClientCredentials(
  deps: Deps,
  options: GrantRequest,
): Promise<GrantResult> {
  const { client, params, ip, dpopJkt } = options;
  if (client.grantType !== "client_credentials" || client.integrationUserId === null) {
    throw unauthorizedClient("This client is not registered for the client_credentials grant");
  }
  const scope = narrowScope(params.scope, client.scope);
  // Read with the client when it authenticated (TokenClient): no second lookup per token.
  if (!client.integrationUserEnabled) throw invalidGrant("The client's integration user is disabled");
  const userId = client.integrationUserId;
  const now = nowSeconds(deps.clock);
  const minted = await mintTokens(deps, { grantType: "client_credentials", scope, now, withRefresh: false, dpopJkt });
  const facts = { clientId: client.clientId, userId, ip, detail: { grant_type: "client_credentials", scope } };
  const outcome = await deps.store.tokens.issue({
    clientId: client.id,
    userId,
    familyId: null,
    tokens: minted.rows,
    audit: auditRow(deps, "token_issued", facts),
    // A secret rotated or a client or user disabled while this request was in flight stops it here.
    authenticated: client,
  });
  if (outcome === "client_changed") throw clientAuthenticationWithdrawn();
  if (outcome !== "issued") throw invalidGrant("The client's integration user is disabled");
  announceAudit(deps, "token_issued", facts);
  return { minted, scope };
}
