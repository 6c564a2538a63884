// Response builders: JSON, HTML and redirects with the headers each kind must carry.
import { textResponse } from "./fast_bodies.ts";

const JSON_TYPE = "application/json; charset=utf-8";

/** Headers that keep credentials out of caches (RFC 6749 §5.1). */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

/**
 * Headers for every HTML page: no framing (clickjacking), no referrer (codes in URLs must not leak), no caching,
 * and a CSP that allows only our own inline-free styles and forms posting to ourselves.
 */
export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  ...NO_STORE,
} as const;

/** A JSON response; `headers` add to or override the defaults. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return textResponse(JSON.stringify(body), { status, headers: { "content-type": JSON_TYPE, ...headers } });
}

/** A JSON response that must never be cached (tokens, introspection, errors of the token endpoint). */
export function jsonNoStore(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return json(body, status, { ...NO_STORE, ...headers });
}

/** An HTML page with the page security headers. */
export function html(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return textResponse(body, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

/** A redirect; 303 after a POST so the browser follows with GET. */
export function redirect(location: string, status: 302 | 303 = 302, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers: { location, ...NO_STORE, "referrer-policy": "no-referrer", ...headers } });
}
