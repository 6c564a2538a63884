// HTML page responses: the shared page headers, optional extra form targets in the CSP, and cookies.
import { html as htmlResponse, PAGE_HEADERS } from "../http/respond.ts";
import { withCookies } from "./cookies.ts";

export interface PageOptions {
  status?: number;
  /** Set-Cookie values to send with the page. */
  cookies?: readonly string[];
  /**
   * URLs a form on this page may end up at through redirects. Browsers apply form-action to every redirect hop
   * after a submission (CSP3 §6.3.1.1), so the consent page must allow the client's redirect URI or the 303 fails.
   */
  formTargets?: readonly string[];
  headers?: Record<string, string>;
}

/** A CSP source expression for a URL: its origin for http(s), its scheme for private-use schemes (RFC 8252 §7.1). */
export function cspSource(target: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol === "https:" || url.protocol === "http:") return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : undefined;
}

/** An HTML page response with the page security headers. */
export function page(body: string, options: PageOptions = {}): Response {
  const headers: Record<string, string> = { ...options.headers };
  const sources = (options.formTargets ?? []).map(cspSource).filter((s): s is string => s !== undefined);
  if (sources.length > 0) {
    headers["content-security-policy"] = PAGE_HEADERS["content-security-policy"].replace(
      "form-action 'self'",
      `form-action 'self' ${sources.join(" ")}`,
    );
  }
  return withCookies(htmlResponse(body, options.status ?? 200, headers), options.cookies ?? []);
}
