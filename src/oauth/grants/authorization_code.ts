// grant_type=authorization_code (RFC 6749 §4.1.3) with PKCE S256 (RFC 7636 §4.6) and replay revocation.
import type { Deps } from "../../deps.ts";
import { nowSeconds } from "../../deps.ts";
import type { Params } from "../../http/body.ts";
import type { AuthorizationCode, ExchangeFacts, IssuePlan, TokenClient } from "../../store/contract.ts";
import { sha256Base64Url } from "../../crypto/hash.ts";
import { constantTimeEqual } from "../../crypto/compare.ts";
import { announceAudit, audit, auditRow, type AuditFacts } from "../audit.ts";
import { invalidDpopProof, invalidGrant, invalidRequest, type OAuthError, unauthorizedClient } from "../errors.ts";
import { type GrantRequest, type GrantResult, mintTokens } from "../issue_tokens.ts";
import { clientAuthenticationWithdrawn } from "../client_auth.ts";

// RFC 7636 §4.1: code-verifier = 43*128unreserved.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function requireParam(params: Params, name: string): string {
  const value = params[name];
  if (value === undefined) throw invalidRequest(`Missing parameter: ${name}`);
  return value;
}

/** PKCE check: a challenge needs its verifier; a verifier without a challenge is a downgrade attempt. */
function pkceError(code: AuthorizationCode, verifierHash: string | undefined): OAuthError | undefined {
  if (code.codeChallenge === null) {
    // RFC 9700 §2.1.1: refuse a verifier for a code issued without a challenge, or PKCE could be stripped.
    return verifierHash === undefined
      ? undefined
      : invalidGrant("code_verifier sent for a code issued without a code_challenge");
  }
  if (verifierHash === undefined) return invalidGrant("code_verifier is required for this code");
  if (!constantTimeEqual(verifierHash, code.codeChallenge)) {
    return invalidGrant("code_verifier does not match the code_challenge");
  }
  return undefined;
}

/** The tokens to issue for a code, with the facts of the audit line announced once they are stored. */
interface CodePlan extends IssuePlan {
  facts: AuditFacts;
}

interface Presented {
  client: TokenClient;
  redirectUri: string;
  verifierHash: string | undefined;
  now: number;
  /** Thumbprint of the key of the request's DPoP proof. */
  dpopJkt: string | undefined;
}

/** The first rule a consumed code breaks (RFC 6749 §4.1.3), or undefined when tokens may be issued. */
function codeError(code: AuthorizationCode, facts: ExchangeFacts, p: Presented): OAuthError | undefined {
  if (facts.clientChanged) return clientAuthenticationWithdrawn();
  if (code.expiresAt <= p.now) return invalidGrant("The code has expired");
  if (p.redirectUri !== code.redirectUri) {
    return invalidGrant("redirect_uri does not match the authorization request");
  }
  if (facts.userDisabled) return invalidGrant("The user who approved this code is disabled");
  // RFC 9449 §10: a code the request bound with dpop_jkt is exchanged only with a proof by that key.
  if (code.dpopJkt !== null && code.dpopJkt !== p.dpopJkt) {
    return invalidDpopProof("The authorization request bound this code to another DPoP key (dpop_jkt)");
  }
  return pkceError(code, p.verifierHash);
}

/** Checks the client's grant and the request's shape (RFC 6749 §4.1.3, RFC 7636 §4.5) before any code is touched. */
async function readPresented(
  deps: Deps,
  { client, params, dpopJkt }: GrantRequest,
): Promise<{ codeValue: string; presented: Presented }> {
  if (client.grantType !== "authorization_code") {
    throw unauthorizedClient("This client is not registered for the authorization_code grant");
  }
  const codeValue = requireParam(params, "code");
  const redirectUri = requireParam(params, "redirect_uri");
  const verifier = params.code_verifier;
  if (verifier !== undefined && !CODE_VERIFIER.test(verifier)) {
    throw invalidRequest("code_verifier must be 43 to 128 unreserved characters (RFC 7636)");
  }
  const now = nowSeconds(deps.clock);
  const presented = {
    client,
    redirectUri,
    now,
    dpopJkt,
    verifierHash: verifier === undefined ? undefined : await sha256Base64Url(verifier, deps.digest),
  };
  return { codeValue, presented };
}

/**
 * Exchanges an authorization code for an access and refresh token. Consuming the code and storing the tokens is
 * one transaction; a failed check still uses the code up, and a replay revokes every token of the approval
 * (RFC 6749 §4.1.2).
 * @throws OAuthError invalid_request, unauthorized_client, invalid_grant
 */
export async function exchangeAuthorizationCode(
  deps: Deps,
  options: GrantRequest,
): Promise<GrantResult> {
  const { client, ip, dpopJkt } = options;
  const { codeValue, presented } = await readPresented(deps, options);
  const { now } = presented;
  // Minted up front (digests are async) so the store can insert them in the consuming transaction.
  const minted = await mintTokens(deps, {
    grantType: "authorization_code",
    scope: "",
    now,
    withRefresh: true,
    dpopJkt,
  });
  const codeHash = await deps.digest(codeValue);
  const result = await deps.store.tokens.exchangeCode<CodePlan, OAuthError>(codeHash, client, now, (code, facts) => {
    const refusal = codeError(code, facts, presented);
    if (refusal) return { refuse: refusal };
    const issued: AuditFacts = { clientId: client.clientId, userId: code.userId, ip, detail: { grant_type: "authorization_code", scope: code.scope } };
    // The audit row is written in the exchange's own transaction: no tokens without it, and one commit.
    const tokens = minted.rows.map((row) => ({ ...row, scope: code.scope }));
    return { issue: { tokens, audit: auditRow(deps, "token_issued", issued), facts: issued } };
  });
  switch (result.status) {
    case "missing":
      throw invalidGrant("The code is invalid");
    case "reused":
      await audit(deps, "code_reuse_detected", {
        clientId: client.clientId,
        userId: result.code.userId,
        ip,
        detail: { family: result.code.familyId },
      });
      throw invalidGrant("The code has already been used");
    case "refused":
      throw result.reason;
    case "family_revoked":
      // The approval was revoked (e.g. the user withdrew access) after the code was issued.
      throw invalidGrant("The authorization behind this code has been revoked");
    case "issued":
      announceAudit(deps, "token_issued", result.plan.facts);
      return { minted, scope: result.code.scope };
  }
}
