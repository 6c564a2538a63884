// Browser pages: landing page, sign-in, consent, account, static assets.
import type { RouteFactory } from "../http/router.ts";

/** Routes of the server-rendered pages. */
export const uiRoutes: RouteFactory = () => [];
