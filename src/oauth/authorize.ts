// GET /oauth/authorize and the consent decision: the browser-facing start of the authorization code flow.
import type { RouteFactory } from "../http/router.ts";

/** Routes of the authorization endpoint. */
export const authorizeRoutes: RouteFactory = () => [];
