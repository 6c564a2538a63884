// GET /oauth/token/info: Doorkeeper's token introspection for the bearer of an access token.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { Handler } from "../http/router.ts";
import { authenticateBearer } from "./bearer_auth.ts";

/**
 * Handler for GET /oauth/token/info in Doorkeeper's shape. The token comes only from the Authorization header:
 * Doorkeeper also reads ?access_token=, which RFC 9700 §4.3.2 advises against (URLs leak into logs).
 */
export function tokenInfoEndpoint(deps: Deps): Handler {
  return async (request, ctx) => {
    const { token } = await authenticateBearer(deps, request, ctx.url);
    return deps.respond.jsonNoStore({
      resource_owner_id: token.userId,
      scope: token.scope.split(" ").filter(Boolean),
      expires_in: token.expiresAt - nowSeconds(deps.clock),
      application: { uid: token.clientPublicId },
      created_at: token.issuedAt,
      // Not in Doorkeeper's shape, so only for a bound token: a Bearer token's answer stays byte for byte the same.
      ...(token.dpopJkt === null ? {} : { token_type: "DPoP", cnf: { jkt: token.dpopJkt } }),
    });
  };
}
