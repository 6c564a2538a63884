// Cookies: parsing the Cookie header and building Set-Cookie values with the attributes every cookie here needs.
import type { Config } from "../config.ts";

/** Cookie name/value pairs from the request; the first occurrence of a name wins (RFC 6265 §5.4 order). */
export function readCookies(request: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const raw of (request.headers.get("cookie") ?? "").split(";")) {
    const part = raw.trim();
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** True when the public base URL is https: cookies then get Secure and the __Host- prefix. */
export function isSecureOrigin(config: Pick<Config, "baseUrl">): boolean {
  return config.baseUrl.startsWith("https:");
}

/**
 * A cookie name with the __Host- prefix when the origin is https (RFC 6265bis §4.1.3.2: the browser then insists on
 * Secure, Path=/ and no Domain, so a sibling subdomain cannot plant or overwrite it).
 */
export function cookieName(config: Pick<Config, "baseUrl">, base: string): string {
  return isSecureOrigin(config) ? `__Host-${base}` : base;
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure on https; maxAge 0 deletes the cookie. */
export function setCookie(config: Pick<Config, "baseUrl">, name: string, value: string, maxAgeSeconds: number): string {
  const parts = [`${name}=${value}`, "Path=/", `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`, "HttpOnly", "SameSite=Lax"];
  if (isSecureOrigin(config)) parts.push("Secure");
  return parts.join("; ");
}

/** Headers carrying several Set-Cookie values (a plain record cannot repeat a name). */
export function withCookies(response: Response, cookies: readonly string[]): Response {
  for (const cookie of cookies) response.headers.append("set-cookie", cookie);
  return response;
}
