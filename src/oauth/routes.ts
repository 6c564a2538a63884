// OAuth endpoints: token, revoke, introspect, token info, metadata (the authorization endpoint's pages are in ui/).
import type { RouteFactory } from "../http/router.ts";
import { tokenEndpoint } from "./token.ts";
import { revokeEndpoint } from "./revoke.ts";
import { introspectEndpoint } from "./introspect.ts";
import { tokenInfoEndpoint } from "./token_info.ts";
import { metadataEndpoint } from "./metadata.ts";

/** Routes of the OAuth 2.0 authorization server. */
export const oauthRoutes: RouteFactory = (deps) => [
  { method: "POST", path: "/oauth/token", handler: tokenEndpoint(deps) },
  { method: "POST", path: "/oauth/revoke", handler: revokeEndpoint(deps) },
  { method: "POST", path: "/oauth/introspect", handler: introspectEndpoint(deps) },
  { method: "GET", path: "/oauth/token/info", handler: tokenInfoEndpoint(deps) },
  { method: "GET", path: "/.well-known/oauth-authorization-server", handler: metadataEndpoint(deps) },
];
