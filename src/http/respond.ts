// Response builders: JSON through the app's TextResponse, HTML and redirects, with the headers each kind must carry.
import type { Responders, TextResponse } from "../deps.ts";

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

/** The portable TextResponse, and the default: a standard Response. */
export const standardTextResponse: TextResponse = (text, init) => new Response(text, init);

/** The app's JSON answers over `make`, which an adapter may replace (AppOptions.textResponse). */
export function createResponders(make: TextResponse): Responders {
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
    make(JSON.stringify(body), { status, headers: { "content-type": JSON_TYPE, ...headers } });
  return {
    text: make,
    json,
    jsonNoStore: (body, status = 200, headers = {}) => json(body, status, { ...NO_STORE, ...headers }),
  };
}

/**
 * An HTML page with the page security headers. Pages and redirects are standard Responses: they answer browsers,
 * and no hot path serves one.
 */
export function html(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

/** A redirect; 303 after a POST so the browser follows with GET. */
export function redirect(location: string, status: 302 | 303 = 302, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers: { location, ...NO_STORE, "referrer-policy": "no-referrer", ...headers } });
}
