// A cookie-keeping browser stand-in over app.fetch, plus form scraping, for tests of the HTML pages.
import type { App } from "../../src/app.ts";
import { BASE } from "./requests.ts";

export interface TestBrowser {
  /** Cookies currently held, by name. */
  cookies: Map<string, string>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** POSTs an application/x-www-form-urlencoded body. */
  post(path: string, fields: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

/** Applies Set-Cookie headers to the jar: Max-Age=0 deletes, anything else stores the value. */
function remember(jar: Map<string, string>, response: Response): void {
  for (const header of response.headers.getSetCookie()) {
    const [pair = "", ...attributes] = header.split(";");
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
    if (expired || value === "") jar.delete(name);
    else jar.set(name, value);
  }
}

/** A new browser with an empty cookie jar; `clientIp` is passed to app.fetch as the connection address. */
export function testBrowser(app: App, options: { clientIp?: string } = {}): TestBrowser {
  const cookies = new Map<string, string>();
  async function send(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await app.fetch(new Request(new URL(path, BASE), { ...init, headers }), {
      remoteAddress: options.clientIp ?? "192.0.2.1",
    });
    remember(cookies, response);
    return response;
  }
  return {
    cookies,
    get: (path, headers = {}) => send(path, { headers }),
    post: (path, fields, headers = {}) =>
      send(path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields).toString(),
      }),
  };
}

function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** The hidden inputs of the form whose action is `action` (first such form), by name. */
export function formFields(page: string, action: string): Record<string, string> {
  const start = page.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form with action ${action}`);
  const form = page.slice(start, page.indexOf("</form>", start));
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  }
  return fields;
}

/** Query string of an authorization request for `clientId`, with the test client's defaults. */
export function authorizePath(clientId: string, overrides: Record<string, string | undefined> = {}): string {
  const params: Record<string, string | undefined> = {
    client_id: clientId,
    response_type: "code",
    redirect_uri: "https://client.example/cb",
    scope: "fields:read",
    state: "xyz-state",
    ...overrides,
  };
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, value);
  return `/oauth/authorize?${search}`;
}

/** Signs `browser` in through the real sign-in form; returns the sign-in POST's response (a 303). */
export async function signIn(
  browser: TestBrowser,
  credentials: { username: string; password: string },
  next = "/account",
): Promise<Response> {
  const form = await (await browser.get(`/signin?next=${encodeURIComponent(next)}`)).text();
  const fields = formFields(form, "/signin");
  return browser.post("/signin", { ...fields, username: credentials.username, password: credentials.password });
}
