// Bearer credentials from the Authorization header (RFC 6750 §2.1); other token transports are refused.
import { badRequest } from "./errors.ts";

/** The WWW-Authenticate challenge for bearer-protected resources (RFC 6750 §3). */
export function bearerChallenge(error?: string, extra: Record<string, string> = {}): string {
  const parts = ['Bearer realm="fieldgate"'];
  if (error) parts.push(`error="${error}"`);
  for (const [key, value] of Object.entries(extra)) parts.push(`${key}="${value}"`);
  return parts.join(", ");
}

// RFC 6750 §2.1 b64token syntax.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
// RFC 9110 §11.1: the auth-scheme is a token, followed by a space or nothing.
const SCHEME = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?: |$)/;

/**
 * The bearer token, or undefined when the request carries no bearer credentials: no Authorization header, or one
 * with another scheme (Basic, Digest, …), which RFC 6750 §3.1 treats as a request lacking authentication, answered
 * with a bare challenge rather than invalid_request.
 * @throws HttpError bad_request (400, answered as invalid_request) for a malformed Bearer header, a header that has no scheme, or a token
 * in the URL
 */
export function readBearer(request: Request, url: URL): string | undefined {
  // RFC 6750 §2.3 allows access_token in the query but RFC 9700 §4.3.2 says not to: URLs leak into logs.
  if (url.searchParams.has("access_token")) {
    throw badRequest("Send the access token in the Authorization header, not the URL", {
      headers: { "www-authenticate": bearerChallenge("invalid_request") },
    });
  }
  const header = request.headers.get("authorization");
  if (header === null) return undefined;
  const match = BEARER.exec(header);
  if (match) return match[1];
  const scheme = SCHEME.exec(header)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== "bearer") return undefined;
  throw badRequest("Authorization header must be: Bearer <token>", {
    headers: { "www-authenticate": bearerChallenge("invalid_request") },
  });
}
