// POST /oauth/revoke (RFC 7009; spec §4.3): a client revokes one of its own access or refresh tokens.
import type { Deps } from "../deps.ts";
import type { Handler } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import { nowSeconds } from "../deps.ts";
import { audit } from "./audit.ts";
import { authenticateClient, refuseQueryCredentials } from "./client_auth.ts";
import { invalidRequest, unauthorizedClient } from "./errors.ts";
import { tokenKey } from "./token_keys.ts";

/** The parameters this endpoint reads (RFC 7009 §2.1, client auth RFC 6749 §2.3.1); others are ignored (§3.2). */
const PARAMS = ["token", "token_type_hint", "client_id", "client_secret"] as const;

/**
 * Handler for POST /oauth/revoke. token_type_hint is advisory and not read at all: one digest lookup finds either
 * kind, so a wrong or unknown hint still finds the token (RFC 7009 §2.1: the server extends its search across all
 * types). Unknown, expired or already revoked tokens answer 200 `{}` (§2.2); a refresh token takes its whole
 * family with it. unsupported_token_type (§2.2.1) is never sent: both kinds we issue can be revoked.
 */
export function revokeEndpoint(deps: Deps): Handler {
  return async (request, ctx) => {
    refuseQueryCredentials(ctx.url);
    const params = await readParams(request, deps.config.maxBodyBytes, { recognized: PARAMS });
    const client = await authenticateClient(deps, request, { params, ctx });
    const token = params.token;
    if (token === undefined) throw invalidRequest("Missing parameter: token");
    const result = await deps.store.tokens.revoke(
      await tokenKey(deps, token),
      client.id,
      nowSeconds(deps.clock),
    );
    if (result.status === "other_client") {
      // Doorkeeper's answer; RFC 7009 §2.1 only says the token must not be revoked.
      throw unauthorizedClient("The token was not issued to this client", { status: 403 });
    }
    if (result.status === "revoked") {
      await audit(deps, "token_revoked", {
        clientId: client.clientId,
        ip: ctx.clientIp,
        detail: { kind: result.kind },
      });
    }
    return deps.respond.jsonNoStore({});
  };
}
