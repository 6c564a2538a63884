// grant_type=authorization_code (RFC 6749 §4.1.3) with PKCE S256 (RFC 7636 §4.6) and replay revocation.
import type { Deps } from "../../deps.ts";
import { nowSeconds } from "../../deps.ts";
import type { Params } from "../../http/body.ts";
import type { Client } from "../../store/clients.ts";
import type { AuthorizationCode } from "../../store/codes.ts";
import { sha256Base64Url } from "../../crypto/hash.ts";
import { constantTimeEqual } from "../../crypto/compare.ts";
import { audit } from "../audit.ts";
import { invalidGrant, invalidRequest, unauthorizedClient } from "../errors.ts";
import { mintTokens, type GrantResult } from "../issue_tokens.ts";


// RFC 7636 §4.1: code-verifier = 43*128unreserved.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function requireParam(params: Params, name: string): string {
  const value = params[name];
  if (value === undefined) throw invalidRequest(`Missing parameter: ${name}`);
  return value;
}

/** PKCE check: a challenge needs its verifier; a verifier without a challenge is a downgrade attempt. */
async function checkPkce(code: AuthorizationCode, verifier: string | undefined): Promise<void> {
  if (code.codeChallenge === null) {
    // RFC 9700 §2.1.1: refuse a verifier for a code issued without a challenge, or PKCE could be stripped.
    if (verifier !== undefined) throw invalidGrant("code_verifier sent for a code issued without a code_challenge");
    return;
  }
  if (verifier === undefined) throw invalidGrant("code_verifier is required for this code");
  if (!constantTimeEqual(await sha256Base64Url(verifier), code.codeChallenge)) {
    throw invalidGrant("code_verifier does not match the code_challenge");
  }
}

/** Every rule a consumed code must pass before tokens are issued (RFC 6749 §4.1.3). */
async function checkCode(deps: Deps, code: AuthorizationCode, options: { client: Client; params: Params; now: number }) {
  const { client, params, now } = options;
  if (code.clientId !== client.id) throw invalidGrant("The code was issued to another client");
  if (code.expiresAt <= now) throw invalidGrant("The code has expired");
  if (params.redirect_uri !== code.redirectUri) throw invalidGrant("redirect_uri does not match the authorization request");
  await checkPkce(code, params.code_verifier);
  const user = await deps.store.users.findById(code.userId);
  if (!user || user.disabled) throw invalidGrant("The user who approved this code is disabled");
}

/**
 * Exchanges an authorization code for an access and refresh token. The code is marked used before any other
 * check, so a failed attempt burns it too; a replay revokes every token of the approval (RFC 6749 §4.1.2).
 * @throws OAuthError invalid_request, unauthorized_client, invalid_grant
 */
export async function exchangeAuthorizationCode(deps: Deps, options: { client: Client; params: Params; ip: string }): Promise<GrantResult> {
  const { client, params, ip } = options;
  if (client.grantType !== "authorization_code") {
    throw unauthorizedClient("This client is not registered for the authorization_code grant");
  }
  const codeValue = requireParam(params, "code");
  requireParam(params, "redirect_uri");
  const verifier = params.code_verifier;
  if (verifier !== undefined && !CODE_VERIFIER.test(verifier)) {
    throw invalidRequest("code_verifier must be 43 to 128 unreserved characters (RFC 7636)");
  }
  const now = nowSeconds(deps.clock);
  const consumed = await deps.store.codes.consume(await deps.digest(codeValue), now);
  if (consumed.status === "missing") throw invalidGrant("The code is invalid");
  if (consumed.status === "reused") {
    await audit(deps, "code_reuse_detected", {
      clientId: client.clientId,
      userId: consumed.code.userId,
      ip,
      detail: { family: consumed.code.familyId },
    });
    throw invalidGrant("The code has already been used");
  }
  const code = consumed.code;
  await checkCode(deps, code, { client, params, now });
  const minted = await mintTokens(deps, { grantType: "authorization_code", scope: code.scope, now, withRefresh: true });
  const stored = await deps.store.tokens.issue({ clientId: client.id, userId: code.userId, familyId: code.familyId, tokens: minted.rows });
  // A replay of the code revoked the family between consume and issue: nothing may be handed out.
  if (!stored) throw invalidGrant("The code has already been used");
  await audit(deps, "token_issued", {
    clientId: client.clientId,
    userId: code.userId,
    ip,
    detail: { grant_type: "authorization_code", scope: code.scope },
  });
  return { minted, scope: code.scope };
}
