// The request's URL, refused when a Host header could have moved its path.

// What a Host header may contain and still leave the path alone: letters, digits, dots (a trailing one too),
// dashes, underscores, the port's colon and an IPv6 literal's brackets. "/", "?", "#", "@", "\\" and spaces
// are what turn it into part of the URL's path, query or user information.
const HOST = /^[A-Za-z0-9._:[\]-]+$/;

/**
 * The request's URL, or undefined for a malformed request. Deno.serve (and other servers an embedder may put in
 * front of app.fetch) build request.url from the Host header and the target, so "Host: x/healthz?" turned GET /nope
 * into /healthz: routing (and a proxy's path rules) could be sidestepped, and the log showed the wrong path. Such a
 * Host is refused, and so is a URL that does not parse (":", "x:99999"). A request without Host cannot change the
 * path and is served: HTTP/1.0 health checks (HAProxy's default) send none. The Node adapter builds the URL from
 * the base URL and the request line alone, so there the check only costs one header read.
 */
export function requestUrl(request: Request): URL | undefined {
  const host = request.headers.get("host");
  if (host !== null && !HOST.test(host)) return undefined;
  return URL.parse(request.url) ?? undefined;
}
