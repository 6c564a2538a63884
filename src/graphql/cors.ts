// CORS for /graphql only, off unless origins are configured (Fetch standard CORS protocol; no credentials).
import type { Config } from "../config.ts";

const ALLOWED_METHODS = "GET, POST, OPTIONS";
// X-Request-Id: a caller may send its own for log correlation (docs/operations.md#logs), browsers included. DPoP
// carries a browser client's proof, and DPoP-Nonce tells it the nonce to use (RFC 9449 §7, §9).
const ALLOWED_HEADERS = "authorization, content-type, accept, x-request-id, dpop";
const EXPOSED_HEADERS = "www-authenticate, x-request-id, dpop-nonce";

/**
 * Headers every /graphql response carries whatever the request, the router's 405 included: Vary: Origin when CORS
 * is on, on every response, allowed origin or not, so a shared cache never serves one origin's answer to another.
 */
export function everyResponseHeaders(config: Config): Record<string, string> {
  return config.corsOrigins.length === 0 ? {} : { vary: "Origin" };
}

/**
 * Headers an actual (non-preflight) response carries. Empty when CORS is off. Credentials (cookies) are never
 * allowed: the API authenticates with bearer tokens only, so a browser origin gains nothing it could not send.
 */
export function corsHeaders(config: Config, request: Request): Record<string, string> {
  const headers = everyResponseHeaders(config);
  const origin = request.headers.get("origin");
  if (origin === null || !config.corsOrigins.includes(origin)) return headers;
  return { ...headers, "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS };
}

/** The answer to a preflight OPTIONS request; a disallowed origin gets no CORS headers, so the browser stops. */
export function preflightResponse(config: Config, request: Request): Response {
  const headers = corsHeaders(config, request);
  if (headers["access-control-allow-origin"]) {
    headers["access-control-allow-methods"] = ALLOWED_METHODS;
    headers["access-control-allow-headers"] = ALLOWED_HEADERS;
    headers["access-control-max-age"] = "600";
  }
  return new Response(null, { status: 204, headers });
}
