// Browser pages: landing page, authorization, sign-in, account, demo walkthrough, stylesheet; no posts from other sites.
import type { Deps } from "../deps.ts";
import type { RequestContext, Route, RouteFactory } from "../http/router.ts";
import { isCrossSiteRequest } from "../http/request_site.ts";
import { invalidRequest } from "../oauth/errors.ts";
import { page } from "./page.ts";
import { readSession } from "./session.ts";
import { renderLanding } from "./landing.ts";
import { STYLESHEET } from "./style.ts";
import { authRoutes } from "./auth_routes.ts";
import { authorizeRoutes } from "./authorize_routes.ts";
import { accountRoutes } from "./account_routes.ts";
import { demoRoutes } from "./demo_routes.ts";

async function landingEndpoint(deps: Deps, request: Request, ctx: RequestContext): Promise<Response> {
  const signedIn = await readSession(deps, request);
  return page(renderLanding({
    baseUrl: deps.config.baseUrl,
    demo: deps.demo !== undefined,
    signedIn: signedIn ? signedIn.user.name ?? signedIn.user.username : undefined,
    // The flag sign-out's redirect carries; a signed-in browser (a stale or crafted link) is not told otherwise.
    signedOut: !signedIn && ctx.url.searchParams.has("signed_out"),
  }));
}

function stylesheet(): Response {
  return new Response(STYLESHEET, {
    headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600" },
  });
}

/**
 * Every POST here is a form, and one the browser says another site sent is refused before its body is read: the
 * second layer behind each form's CSRF token (docs/security.md#browser-pages). `Sec-Fetch-Site: same-origin` (our
 * own page) and `none` (typed by the user) pass, and so does a request with neither header: the token judges it.
 */
function refuseCrossSitePosts(deps: Deps, route: Route): Route {
  if (route.method !== "POST") return route;
  const { handler } = route;
  return {
    ...route,
    handler: async (request, ctx) => {
      if (isCrossSiteRequest(request, deps.config.baseUrl)) {
        throw invalidRequest("Another site sent this form, so nothing was changed", { status: 403 });
      }
      return await handler(request, ctx);
    },
  };
}

/** Routes of the server-rendered pages. */
export const uiRoutes: RouteFactory = (deps): Route[] => {
  const routes: Route[] = [
    { method: "GET", path: "/", surface: "html", handler: (req, ctx) => landingEndpoint(deps, req, ctx) },
    { method: "GET", path: "/assets/style.css", surface: "html", handler: async () => stylesheet() },
    ...authorizeRoutes(deps),
    ...authRoutes(deps),
    ...accountRoutes(deps),
    ...demoRoutes(deps),
  ];
  return routes.map((route) => refuseCrossSitePosts(deps, route));
};
