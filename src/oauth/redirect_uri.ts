// Matching a presented redirect URI against the registered one (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3).

/** Hosts on which a redirect URI may use http: the loopback interface of the user's own device (RFC 8252 §7.3, §8.3). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * True when `presented` is the registered redirect URI, compared as exact strings for every client, loopback
 * included: every client here is confidential and registered one callback, so any other URI (another port too)
 * would make the endpoint an open redirector (RFC 9700 §4.1.3).
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  return presented === registered;
}

/**
 * True for an http loopback redirect URI. Any program on the user's device can listen on a loopback port while the
 * client is not running there and present its client_id, so an earlier approval proves nothing about a new request:
 * such a client gets the consent page every time (RFC 8252 §8.6, RFC 6749 §10.2).
 */
export function isLoopbackRedirectUri(uri: string | null): boolean {
  const url = uri === null ? null : URL.parse(uri);
  return url !== null && url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
}
