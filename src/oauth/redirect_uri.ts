// Matching a presented redirect URI against the registered one (RFC 6749 §3.1.2.3, RFC 8252 §7.3, RFC 9700 §2.1).

/** Hosts on which a redirect URI may use http: the loopback interface of the user's own device (RFC 8252 §7.3, §8.3). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * True when `presented` is the registered redirect URI: the same string, or, for an http loopback URI, the same
 * string but for the port. RFC 8252 §7.3 requires any port on loopback (a native app listens on whatever port is
 * free at the time), and RFC 9700 §2.1 makes that the one exception to exact matching. The presented URI must be
 * written as the URL standard writes it, as registration requires of the registered one, so nothing but the port
 * can differ: scheme, host, path and query still match byte for byte.
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (presented === registered) return true;
  const expected = URL.parse(registered);
  if (!expected || !isLoopback(expected)) return false;
  const actual = URL.parse(presented);
  if (!actual || actual.href !== presented || actual.protocol !== "http:") return false;
  actual.port = expected.port;
  return actual.href === registered;
}

function isLoopback(url: URL): boolean {
  return url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * True for an http loopback redirect URI: the client is a native app on the user's device (RFC 8252 §7.3). Any
 * program on that device can listen on a loopback port and present the app's client_id, and the app's secret ships
 * inside it (RFC 8252 §8.5), so such a client is treated as public: PKCE is required (§8.1) and the user confirms
 * every authorization (§8.6, RFC 6749 §10.2).
 */
export function isLoopbackRedirectUri(uri: string | null): boolean {
  const url = uri === null ? null : URL.parse(uri);
  return url !== null && isLoopback(url);
}
