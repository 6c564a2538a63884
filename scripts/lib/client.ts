// A plain HTTP client for the scripts: token requests, introspection, and the browser code flow with cookies.
import { encodeBase64Url } from "../../src/crypto/base64url.ts";
import { sha256Base64Url } from "../../src/crypto/hash.ts";

export interface Credentials {
  client_id: string;
  client_secret: string;
}

export interface DemoCredentialsFile {
  username: string;
  password: string;
  authorizationCodeClient: Credentials & { redirect_uri: string; scope: string };
  clientCredentialsClient: Credentials;
}

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
}

/** POST a JSON body; returns status and parsed JSON (undefined for a non-JSON body). */
export async function postJson(base: string, path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** RFC 7662 introspection by the client that owns the token: true when the server says it is active. */
export async function isActive(base: string, client: Credentials, token: string): Promise<boolean> {
  const res = await postJson(base, "/oauth/introspect", { ...client, token });
  if (res.status !== 200) throw new Error(`introspection failed with ${res.status}`);
  return res.json?.active === true;
}

/** The hidden inputs of the first form posting to `action`, by name (the CSRF token among them). */
export function hiddenFields(page: string, action: string): Record<string, string> {
  const start = page.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action}`);
  const form = page.slice(start, page.indexOf("</form>", start));
  const out: Record<string, string> = {};
  const unescape = (s: string) =>
    s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  for (const m of form.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1]!)] = unescape(m[2]!);
  return out;
}

/** A cookie-keeping browser: enough to walk sign-in and consent like a person would. */
export function browser(base: string) {
  const jar = new Map<string, string>();
  async function send(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(new URL(path, base), { ...init, headers, redirect: "manual" });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ""] = c.split(";");
      const eq = pair.indexOf("=");
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /max-age=0/i.test(c)) jar.delete(pair.slice(0, eq).trim());
      else jar.set(pair.slice(0, eq).trim(), value);
    }
    return res;
  }
  const form = (path: string, fields: Record<string, string>) =>
    send(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
  return { send, form, jar };
}

/** A browser signed in as the demo user; later authorizations reuse its session and remembered consent. */
export async function signedInBrowser(base: string, demo: DemoCredentialsFile) {
  const b = browser(base);
  const signInPage = await (await b.send("/signin?next=%2Faccount")).text();
  const signedIn = await b.form("/signin", { ...hiddenFields(signInPage, "/signin"), username: demo.username, password: demo.password });
  if (signedIn.status !== 303) throw new Error(`sign-in failed with ${signedIn.status}`);
  return b;
}

/** A code of the demo client and the PKCE verifier its exchange must present. */
export interface IssuedCode {
  code: string;
  verifier: string;
}

/**
 * Runs /oauth/authorize for the demo client in a signed-in browser, approving if asked; returns the code. The demo
 * client's redirect URI is on loopback, which makes it a native app that must use PKCE (RFC 8252 §8.1).
 */
export async function authorizeCode(b: ReturnType<typeof browser>, demo: DemoCredentialsFile): Promise<IssuedCode> {
  const client = demo.authorizationCodeClient;
  const verifier = encodeBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = await sha256Base64Url(verifier);
  let res = await b.send(`/oauth/authorize?${new URLSearchParams({
    client_id: client.client_id, response_type: "code", redirect_uri: client.redirect_uri, scope: client.scope, state: "s1",
    code_challenge: challenge, code_challenge_method: "S256",
  })}`);
  if (res.status === 200) {
    res = await b.form("/oauth/authorize", { ...hiddenFields(await res.text(), "/oauth/authorize"), decision: "approve" });
  }
  const location = res.headers.get("location") ?? "";
  const code = location ? new URL(location).searchParams.get("code") : null;
  if (!code) throw new Error(`no code in ${res.status} ${location.split("?")[0]}`);
  return { code, verifier };
}

/** Exchanges a code of the demo web client for tokens. */
export async function exchangeCode(base: string, demo: DemoCredentialsFile, issued: IssuedCode): Promise<TokenResponse> {
  const client = demo.authorizationCodeClient;
  const token = await postJson(base, "/oauth/token", {
    grant_type: "authorization_code", client_id: client.client_id, client_secret: client.client_secret, code: issued.code,
    redirect_uri: client.redirect_uri, code_verifier: issued.verifier,
  });
  if (token.status !== 200) throw new Error(`code exchange failed with ${token.status}`);
  return token.json as unknown as TokenResponse;
}

/** The whole authorization code flow through the pages: sign in, authorize, approve, exchange the code. */
export async function codeFlow(base: string, demo: DemoCredentialsFile): Promise<TokenResponse & { code: string }> {
  const b = await signedInBrowser(base, demo);
  const issued = await authorizeCode(b, demo);
  return { ...(await exchangeCode(base, demo, issued)), code: issued.code };
}
