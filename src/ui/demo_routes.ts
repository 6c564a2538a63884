// The demo client: starts /oauth/authorize, takes the callback, and calls the token, revoke and GraphQL endpoints
// through deps.selfFetch exactly as an external confidential client would. Its tokens stay in server memory.
import type { Deps, DemoCredentials } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { Route } from "../http/router.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import { sha256Base64Url } from "../crypto/hash.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { invalidRequest } from "../oauth/errors.ts";
import { cookieName, readCookies, setCookie } from "./cookies.ts";
import { csrfToken, verifyCsrf } from "./csrf.ts";
import { page } from "./page.ts";
import { maskToken, renderDemo, type DemoStep } from "./demo.ts";

/** What the demo client remembers for one browser; never rendered in full. */
interface DemoState {
  expiresAt: number;
  state?: string;
  verifier?: string;
  accessToken?: string;
  refreshToken?: string;
  steps: DemoStep[];
  error?: string;
}

const DEMO_COOKIE = "fieldgate_demo";
const DEMO_TTL_SECONDS = 900;
const MAX_DEMOS = 1_000;
const DEMO_SCOPE = "fields:read";
const QUERY = "{ fields { total_count } }";

/** A JSON POST through the app's own fetch; the body comes back parsed when it is JSON. */
async function callJson(deps: Deps, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await deps.selfFetch(new Request(`${deps.config.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  }));
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (an empty 200 from revoke, say): show it as text.
  }
  return { status: response.status, body: parsed };
}

/** The body with every token-looking value shortened, pretty-printed for the page. */
function masked(body: unknown): string {
  if (typeof body !== "object" || body === null) return String(body);
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const key of ["access_token", "refresh_token"]) {
    if (typeof copy[key] === "string") copy[key] = maskToken(copy[key] as string);
  }
  return JSON.stringify(copy, null, 2);
}

function stringField(body: unknown, name: string): string | undefined {
  const value = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === "string" ? value : undefined;
}

/** Demo routes; only registered when the adapter supplied demo credentials. State lives in this closure. */
export function demoRoutes(deps: Deps): Route[] {
  const demo = deps.demo;
  if (!demo) return [];
  const demos = new Map<string, DemoState>();
  const redirectUri = `${deps.config.baseUrl}/demo/callback`;
  const cookie = cookieName(deps.config, DEMO_COOKIE);

  async function keyOf(request: Request): Promise<string | undefined> {
    const value = readCookies(request).get(cookie);
    return value && /^fgss_[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
  }

  async function load(request: Request): Promise<{ value: string; state: DemoState } | undefined> {
    const value = await keyOf(request);
    if (!value) return undefined;
    const state = demos.get(await deps.digest(value));
    if (!state || state.expiresAt <= nowSeconds(deps.clock)) return undefined;
    return { value, state };
  }

  async function save(value: string, state: DemoState): Promise<void> {
    const now = nowSeconds(deps.clock);
    if (demos.size >= MAX_DEMOS) {
      for (const [key, entry] of demos) if (entry.expiresAt <= now) demos.delete(key);
      while (demos.size >= MAX_DEMOS) demos.delete(demos.keys().next().value as string);
    }
    demos.set(await deps.digest(value), { ...state, expiresAt: now + DEMO_TTL_SECONDS });
  }

  async function start(request: Request): Promise<Response> {
    const value = (await keyOf(request)) ?? randomToken(deps.random, "session");
    const state = randomId(deps.random);
    const verifier = randomId(deps.random, 32);
    await save(value, { expiresAt: 0, state, verifier, steps: [] });
    const url = new URL(`${deps.config.baseUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: (demo as DemoCredentials).clientId,
      response_type: "code",
      redirect_uri: redirectUri,
      scope: DEMO_SCOPE,
      state,
      code_challenge: await sha256Base64Url(verifier),
      code_challenge_method: "S256",
    }).toString();
    const response = redirect(url.pathname + url.search, 302);
    response.headers.append("set-cookie", setCookie(deps.config, cookie, value, DEMO_TTL_SECONDS));
    return response;
  }

  async function queryFields(accessToken: string): Promise<DemoStep> {
    const result = await callJson(deps, "/graphql", { query: QUERY }, { authorization: `Bearer ${accessToken}` });
    return { title: `POST /graphql ${QUERY}`, status: result.status, body: masked(result.body) };
  }

  async function tokenCall(current: DemoState, title: string, body: Record<string, string>): Promise<DemoStep[]> {
    const result = await callJson(deps, "/oauth/token", { ...body, client_id: demo!.clientId, client_secret: demo!.clientSecret });
    const steps: DemoStep[] = [{ title, status: result.status, body: masked(result.body) }];
    const access = stringField(result.body, "access_token");
    if (result.status !== 200 || !access) return steps;
    current.accessToken = access;
    current.refreshToken = stringField(result.body, "refresh_token");
    return [await queryFields(access), ...steps];
  }

  async function callback(request: Request, url: URL): Promise<Response> {
    const found = await load(request);
    const params = url.searchParams;
    const expected = found?.state.state;
    // The client's own checks: state against CSRF on the callback (RFC 6749 §10.12), iss against mix-up (RFC 9207 §2.4).
    if (!found || !expected || !constantTimeEqual(expected, params.get("state") ?? "")) {
      throw invalidRequest("This callback does not belong to a demo started in this browser; start the demo again");
    }
    if (params.get("iss") !== deps.config.baseUrl) throw invalidRequest("The authorization response has the wrong issuer");
    const current: DemoState = { ...found.state, state: undefined, verifier: undefined, error: undefined, steps: [] };
    const code = params.get("code");
    if (!code) {
      current.error = `The authorization server answered ${params.get("error") ?? "without a code"}`;
    } else {
      current.steps = await tokenCall(current, "POST /oauth/token (authorization_code)", {
        grant_type: "authorization_code",
        redirect_uri: redirectUri,
        code,
        code_verifier: found.state.verifier ?? "",
      });
    }
    await save(found.value, current);
    return redirect("/demo", 303);
  }

  async function act(request: Request, action: "refresh" | "revoke"): Promise<Response> {
    const form = await readParams(request, deps.config.maxBodyBytes);
    const found = await load(request);
    if (!found || !(await verifyCsrf(found.value, form.csrf, { purpose: `demo:${action}` }))) {
      throw invalidRequest("The demo has expired; start it again", { status: 403 });
    }
    const current: DemoState = { ...found.state, error: undefined };
    if (!current.refreshToken || !current.accessToken) throw invalidRequest("The demo holds no tokens; start it again");
    if (action === "refresh") {
      const steps = await tokenCall(current, "POST /oauth/token (refresh_token)", {
        grant_type: "refresh_token",
        redirect_uri: redirectUri,
        refresh_token: current.refreshToken,
      });
      current.steps = [...steps, ...current.steps];
    } else {
      const revoked = await callJson(deps, "/oauth/revoke", {
        token_type_hint: "refresh_token",
        token: current.refreshToken,
        client_id: demo!.clientId,
        client_secret: demo!.clientSecret,
      });
      const after = await queryFields(current.accessToken);
      current.steps = [after, { title: "POST /oauth/revoke (refresh_token)", status: revoked.status, body: masked(revoked.body) }, ...current.steps];
      current.accessToken = undefined;
      current.refreshToken = undefined;
    }
    await save(found.value, current);
    return redirect("/demo", 303);
  }

  async function show(request: Request): Promise<Response> {
    const found = await load(request);
    const key = found?.value ?? "";
    return page(renderDemo({
      steps: found?.state.steps ?? [],
      hasTokens: Boolean(found?.state.refreshToken),
      refreshCsrf: key && (await csrfToken(key, "demo:refresh")),
      revokeCsrf: key && (await csrfToken(key, "demo:revoke")),
      error: found?.state.error,
    }));
  }

  return [
    { method: "GET", path: "/demo/start", surface: "html", handler: (req) => start(req) },
    { method: "GET", path: "/demo/callback", surface: "html", handler: (req, ctx) => callback(req, ctx.url) },
    { method: "GET", path: "/demo", surface: "html", handler: (req) => show(req) },
    { method: "POST", path: "/demo/refresh", surface: "html", handler: (req) => act(req, "refresh") },
    { method: "POST", path: "/demo/revoke", surface: "html", handler: (req) => act(req, "revoke") },
  ];
}
