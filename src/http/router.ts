// Hand-written routing: a table of method + exact path to handler; 404 and 405 (with Allow) otherwise, each rendered
// as an HTML page or JSON depending on the route, or, for an unknown path, on who is asking.
import type { Deps } from "../deps.ts";
import { HttpError } from "./errors.ts";
import { methodLabel } from "./metrics.ts";

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
  /**
   * Headers the router's own 405 at this path carries besides Allow (those of the path's first route), for headers
   * every response at the path must have: /graphql sends Vary: Origin when CORS is on.
   */
  refusalHeaders?: Readonly<Record<string, string>>;
  handler: Handler;
}

/**
 * Paths that are API endpoints whatever exists under them: an unknown path here is a client's mistake and gets the
 * JSON error its client library can read, even when a browser asks.
 */
const API_PREFIXES = ["/oauth", "/graphql", "/.well-known", "/healthz", "/metrics"] as const;

function isApiPath(pathname: string): boolean {
  return API_PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/**
 * The quality an Accept header gives `type` ("text/html"): that of the most specific range matching it
 * (RFC 9110 §12.5.1), 0 when none does. No header counts as "*\/*".
 */
export function acceptQuality(accept: string | null, type: string): number {
  const [major] = type.split("/");
  let best = { specificity: -1, q: 0 };
  for (const part of (accept ?? "*/*").split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === "*/*" ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    best = { specificity, q: Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0 };
  }
  return best.q;
}

/**
 * True when a person's browser is loading this as a page: Fetch Metadata says so (Sec-Fetch-Dest: document), or,
 * for browsers without it, Accept prefers HTML to JSON. fetch(), curl and client libraries send neither.
 */
export function isPageNavigation(request: Request): boolean {
  if (request.headers.get("sec-fetch-dest") === "document") return true;
  const accept = request.headers.get("accept");
  return acceptQuality(accept, "text/html") > acceptQuality(accept, "application/json");
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
      if (!methods) throw new HttpError("not_found", "No such endpoint");
      const route = methods.get(method) ?? (method === "HEAD" ? methods.get("GET") : undefined);
      if (route) return route;
      const allow = [...methods.keys()];
      if (methods.has("GET") && !methods.has("HEAD")) allow.push("HEAD");
      // Never the raw method: Deno passes any token through, and the description is echoed and logged.
      const named = methodLabel(method);
      const description = named === "other" ? "This method is not allowed here" : `Method ${named} is not allowed here`;
      const first = methods.values().next().value as Route | undefined;
      throw new HttpError("method_not_allowed", description, {
        headers: { ...first?.refusalHeaders, allow: allow.join(", ") },
      });
    },
    /**
     * The surface errors at this path are rendered for: the route's own, or for an unknown path an HTML page when a
     * browser navigates to it outside the API prefixes (a mistyped link shows a page, not a JSON blob) and JSON
     * otherwise.
     */
    surfaceOf(pathname: string, request?: Request): Surface {
      const methods = byPath.get(pathname);
      if (!methods) return request && !isApiPath(pathname) && isPageNavigation(request) ? "html" : "json";
      const first = methods.values().next().value as Route | undefined;
      return first?.surface ?? "json";
    },
  };
}
