// Which site a browser says started a request (Fetch Metadata, Origin): for refusing state changes from elsewhere.

/**
 * True when the browser says another site started this request: `Sec-Fetch-Site: cross-site`, or an `Origin` that is
 * not the base URL's. `Origin: null` counts as absent: every page here sends `Referrer-Policy: no-referrer`, under
 * which browsers send `Origin: null` even on a same-origin form POST (Fetch, "append a request Origin header";
 * Chromium does). A request with neither header (an older browser, curl) is not judged here; the CSRF token is.
 */
export function isCrossSiteRequest(request: Request, baseUrl: string): boolean {
  if (request.headers.get("sec-fetch-site") === "cross-site") return true;
  const origin = request.headers.get("origin");
  return origin !== null && origin !== "null" && origin !== new URL(baseUrl).origin;
}
