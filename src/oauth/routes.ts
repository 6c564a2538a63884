// OAuth endpoints: token, revoke, introspect, token info, metadata, authorize.
import type { RouteFactory } from "../http/router.ts";
import { authorizeRoutes } from "./authorize.ts";

/** Routes of the OAuth 2.0 authorization server. */
export const oauthRoutes: RouteFactory = (deps) => [...authorizeRoutes(deps)];
