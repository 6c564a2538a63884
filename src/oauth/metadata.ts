// GET /.well-known/oauth-authorization-server: authorization server metadata (RFC 8414 §2).
import type { Deps } from "../deps.ts";
import { KNOWN_SCOPES } from "../config.ts";
import type { Handler } from "../http/router.ts";
import { GRANT_TYPES } from "./token.ts";
import { DPOP_ALGORITHMS } from "./dpop.ts";

const AUTH_METHODS = ["client_secret_post", "client_secret_basic"];

/** The metadata document; the issuer is the configured base URL, which clients compare byte for byte (§3.3). */
export function authorizationServerMetadata(baseUrl: string): Record<string, unknown> {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    introspection_endpoint: `${baseUrl}/oauth/introspect`,
    scopes_supported: Object.keys(KNOWN_SCOPES),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [...GRANT_TYPES],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: AUTH_METHODS,
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
  };
}

/** Handler for the metadata document; public and cacheable for an hour. */
export function metadataEndpoint(deps: Deps): Handler {
  const body = authorizationServerMetadata(deps.config.baseUrl);
  return async () => deps.respond.json(body, 200, { "cache-control": "public, max-age=3600" });
}
