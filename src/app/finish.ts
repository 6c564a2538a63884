// What every answer gets on its way out: the common headers (request id, nosniff, HSTS), its metrics and its log line.
import type { Deps } from "../deps.ts";
import { methodLabel } from "../http/metrics.ts";
import { isSecureOrigin } from "../ui/cookies.ts";

// Behind TLS (an https base URL) browsers are told to use nothing else for a year (RFC 6797); the header is
// ignored over plain http, and the operator's domain, not ours, decides includeSubDomains.
const HSTS = "max-age=31536000";

/** What the app knows of an answered request. */
export interface Answered {
  requestId: string;
  /** performance.now() when the request arrived. */
  started: number;
  routeLabel: string;
  /** The path to log: the route's own, never the raw one; undefined for a request whose URL was not trusted. */
  path: string | undefined;
}

/** Sets the headers every answer carries: its request id, nosniff, and HSTS behind TLS. */
function setCommonHeaders(response: Response, requestId: string, https: boolean): void {
  response.headers.set("x-request-id", requestId);
  if (!response.headers.has("x-content-type-options")) response.headers.set("x-content-type-options", "nosniff");
  if (https) response.headers.set("strict-transport-security", HSTS);
}

/** Counts the answer in the metrics and writes its log line. */
function recordRequest(deps: Deps, request: Request, response: Response, done: Answered): void {
  const seconds = (performance.now() - done.started) / 1000;
  deps.metrics.observeRequest(done.routeLabel, request.method, response.status, seconds);
  // Only the path: query strings can carry codes and state, which must never reach the log.
  deps.log("request", {
    request_id: done.requestId,
    method: methodLabel(request.method),
    path: done.path,
    status: response.status,
    duration_ms: Math.round(seconds * 100_000) / 100,
  });
}

/** The common headers, the metrics and the log line of one answer, set up once per app. */
export function createFinisher(deps: Deps): (request: Request, response: Response, done: Answered) => Response {
  const https = isSecureOrigin(deps.config);
  return (request, response, done) => {
    setCommonHeaders(response, done.requestId, https);
    recordRequest(deps, request, response, done);
    return response;
  };
}
