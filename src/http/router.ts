// Hand-written routing: a table of method + exact path to handler; 404 and 405 (with Allow) otherwise.
import type { Deps } from "../deps.ts";
import { OAuthError } from "../oauth/errors.ts";

/** Per-request facts the adapter and the app know and handlers may need. */
export interface RequestContext {
  url: URL;
  requestId: string;
  /** Best known client address, for throttling and audit; "unknown" when the adapter cannot tell. */
  clientIp: string;
}

export type Handler = (request: Request, ctx: RequestContext) => Promise<Response>;

/** How errors thrown by a route are rendered: JSON for APIs, an HTML page for browser routes. */
export type Surface = "json" | "html";

export interface Route {
  method: "GET" | "POST" | "HEAD" | "OPTIONS" | "DELETE" | "PUT";
  path: string;
  surface?: Surface;
  handler: Handler;
}

/** Builds a route list from deps; each feature area exports one of these. */
export type RouteFactory = (deps: Deps) => Route[];

export interface Match {
  route: Route;
}

/** Indexes routes by path once; `match` is a map lookup. HEAD falls back to GET as HTTP requires. */
export function createRouter(routes: readonly Route[]) {
  const byPath = new Map<string, Map<string, Route>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, Route>();
    if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  return {
    /** The route for method and path; throws not_found (404) or method_not_allowed (405 with Allow). */
    match(method: string, pathname: string): Route {
      const methods = byPath.get(pathname);
      if (!methods) throw new OAuthError("not_found", "No such endpoint");
      const route = methods.get(method) ?? (method === "HEAD" ? methods.get("GET") : undefined);
      if (route) return route;
      const allow = [...methods.keys()];
      if (methods.has("GET") && !methods.has("HEAD")) allow.push("HEAD");
      throw new OAuthError("method_not_allowed", `Method ${method} is not allowed here`, {
        headers: { allow: allow.join(", ") },
      });
    },
    /** The surface of the route at this path, used to render errors raised before a route matched. */
    surfaceOf(pathname: string): Surface {
      const methods = byPath.get(pathname);
      const first = methods?.values().next().value as Route | undefined;
      return first?.surface ?? "json";
    },
  };
}
