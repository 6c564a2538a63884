// The demo client: starts /oauth/authorize, takes the callback, and calls the token, revoke and GraphQL endpoints
// through deps.selfFetch exactly as an external confidential client would. Its tokens stay on the server, sealed
// in the database (demo_state.ts).
import type { Deps, DemoCredentials } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { RequestContext, Route } from "../http/router.ts";
import { addressBucket } from "../http/throttle.ts";
import { readParams } from "../http/body.ts";
import { redirect } from "../http/respond.ts";
import { randomId, randomToken } from "../crypto/random.ts";
import { sha256Base64Url } from "../crypto/hash.ts";
import { constantTimeEqual } from "../crypto/compare.ts";
import { invalidRequest, tooManyRequests } from "../oauth/errors.ts";
import { setCookie } from "./cookies.ts";
import { csrfToken, verifyCsrf } from "./csrf.ts";
import { page } from "./page.ts";
import { maskToken, renderDemo, type DemoStep } from "./demo.ts";
import { demoRedirectUri } from "../demo/redirect_uri.ts";
import { createDemoStore, demoCookieName, DEMO_TTL_SECONDS, type DemoState, type DemoStore, type FoundDemo } from "./demo_state.ts";

const DEMO_SCOPE = "fields:read";
const QUERY = "{ fields { total_count } }";

/** Everything the demo handlers share for one app: deps, the demo client's credentials and its state store. */
interface DemoApp {
  deps: Deps;
  demo: DemoCredentials;
  store: DemoStore;
  cookie: string;
  redirectUri: string;
}

/** Demo routes; only registered when the adapter supplied demo credentials. State lives in the database (DemoStore). */
export function demoRoutes(deps: Deps): Route[] {
  const demo = deps.demo;
  if (!demo) return [];
  const cookie = demoCookieName(deps);
  const app: DemoApp = {
    deps,
    demo,
    store: createDemoStore(deps, cookie),
    cookie,
    redirectUri: demoRedirectUri(deps.config.baseUrl),
  };
  return [
    { method: "GET", path: "/demo/start", surface: "html", handler: (req, ctx) => startDemo(app, req, ctx) },
    { method: "GET", path: "/demo/callback", surface: "html", handler: (req, ctx) => demoCallback(app, req, ctx.url) },
    { method: "GET", path: "/demo", surface: "html", handler: (req) => showDemo(app, req) },
    { method: "POST", path: "/demo/refresh", surface: "html", handler: (req) => refreshDemo(app, req) },
    { method: "POST", path: "/demo/revoke", surface: "html", handler: (req) => revokeDemo(app, req) },
  ];
}

/**
 * HEAD shares the GET routes (router.ts) but must stay safe (RFC 9110 §9.2.1), as /oauth/authorize does: starting
 * replaces the browser's demo state and a callback spends the code. So HEAD acts on nothing and points at /demo.
 */
function safeHead(): Response {
  return redirect("/demo", 303);
}

/**
 * GET /demo/start: remembers a fresh state and PKCE verifier, then sends the browser to /oauth/authorize.
 * Anyone may start a demo without signing in, and each start writes a row that can push out the oldest of the
 * table's bounded set, so starts are counted per address (the throttle's shared allowance per window). A link on
 * another site must not restart a running demo either: a cross-site navigation (Fetch Metadata) that finds one
 * goes to it instead.
 */
async function startDemo(app: DemoApp, request: Request, ctx: RequestContext): Promise<Response> {
  if (request.method === "HEAD") return safeHead();
  const { deps } = app;
  const running = app.store.keyOf(request);
  const site = request.headers.get("sec-fetch-site");
  if (running && (site === "cross-site" || site === "same-site")) return redirect("/demo", 303);
  const keys = [{ id: `demo:ip:${addressBucket(ctx.clientIp)}`, shared: true }];
  const now = nowSeconds(deps.clock);
  const { wait } = await deps.throttle.charge({ checked: keys, counted: keys }, now);
  if (wait > 0) throw tooManyRequests(wait);
  const value = running ?? randomToken(deps.random, "session");
  const state = randomId(deps.random);
  const verifier = randomId(deps.random, 32);
  await app.store.save(value, { state, verifier, steps: [] });
  const url = new URL(`${deps.config.baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: app.demo.clientId,
    response_type: "code",
    redirect_uri: app.redirectUri,
    scope: DEMO_SCOPE,
    state,
    code_challenge: await sha256Base64Url(verifier, deps.digest),
    code_challenge_method: "S256",
  }).toString();
  const response = redirect(url.pathname + url.search, 302);
  response.headers.append("set-cookie", setCookie(deps.config, app.cookie, value, DEMO_TTL_SECONDS));
  return response;
}

/** GET /demo/callback: checks state and issuer, then exchanges the code for tokens. */
async function demoCallback(app: DemoApp, request: Request, url: URL): Promise<Response> {
  if (request.method === "HEAD") return safeHead();
  const found = await app.store.load(request);
  const params = url.searchParams;
  const expected = found?.state.state;
  // The client's own checks: state against CSRF on the callback (RFC 6749 §10.12), iss against mix-up (RFC 9207 §2.4).
  if (!found || !expected || !constantTimeEqual(expected, params.get("state") ?? "")) {
    throw invalidRequest("This callback does not belong to a demo started in this browser; start the demo again");
  }
  if (params.get("iss") !== app.deps.config.baseUrl) throw invalidRequest("The authorization response has the wrong issuer");
  const current: DemoState = { ...found.state, state: undefined, verifier: undefined, error: undefined, steps: [] };
  const code = params.get("code");
  if (!code) {
    const error = params.get("error");
    current.error = error === "access_denied"
      ? "Access was denied, so the application received no authorization code (error=access_denied)"
      : `The authorization server answered ${error ?? "without a code"}`;
  } else {
    current.steps = await tokenCall(app, current, "POST /oauth/token (authorization_code)", {
      grant_type: "authorization_code",
      redirect_uri: app.redirectUri,
      code,
      code_verifier: found.state.verifier ?? "",
    });
  }
  await app.store.save(found.value, current);
  return redirect("/demo", 303);
}

/** GET /demo: the steps so far, with CSRF-bound refresh and revoke forms when tokens are held. */
async function showDemo(app: DemoApp, request: Request): Promise<Response> {
  const found = await app.store.load(request);
  const key = found?.value ?? "";
  return page(renderDemo({
    steps: found?.state.steps ?? [],
    hasTokens: Boolean(found?.state.refreshToken),
    refreshCsrf: key && (await csrfToken(app.deps, key, { purpose: "demo:refresh" })),
    revokeCsrf: key && (await csrfToken(app.deps, key, { purpose: "demo:revoke" })),
    error: found?.state.error,
  }));
}

/** POST /demo/refresh: uses the refresh token and queries with the new access token. */
async function refreshDemo(app: DemoApp, request: Request): Promise<Response> {
  const { found, current, refreshToken } = await loadForAction(app, request, "refresh");
  const steps = await tokenCall(app, current, "POST /oauth/token (refresh_token)", {
    grant_type: "refresh_token",
    redirect_uri: app.redirectUri,
    refresh_token: refreshToken,
  });
  // A 400 (invalid_grant: revoked from the account page, expired, replayed) will not change on a retry: the demo
  // lets go of its tokens, so the page offers a fresh start instead of buttons that can only fail again.
  if (steps.at(-1)?.status === 400) {
    current.accessToken = undefined;
    current.refreshToken = undefined;
    current.error = "The refresh token is no longer accepted; start the demo again";
  }
  current.steps = [...steps, ...current.steps];
  await app.store.save(found.value, current);
  return redirect("/demo", 303);
}

/** POST /demo/revoke: revokes the refresh token, then shows the access token failing too. */
async function revokeDemo(app: DemoApp, request: Request): Promise<Response> {
  const { found, current, refreshToken, accessToken } = await loadForAction(app, request, "revoke");
  const revoked = await callJson(app.deps, "/oauth/revoke", {
    token_type_hint: "refresh_token",
    token: refreshToken,
    client_id: app.demo.clientId,
    client_secret: app.demo.clientSecret,
  });
  const after = await queryFields(app.deps, accessToken);
  const revokeStep = { title: "POST /oauth/revoke (refresh_token)", status: revoked.status, body: masked(revoked.body) };
  current.steps = [after, revokeStep, ...current.steps];
  current.accessToken = undefined;
  current.refreshToken = undefined;
  await app.store.save(found.value, current);
  return redirect("/demo", 303);
}

/** The CSRF-checked demo a refresh or revoke acts on, with its tokens; 403 when expired, 400 without tokens. */
async function loadForAction(app: DemoApp, request: Request, action: "refresh" | "revoke") {
  const form = await readParams(request, app.deps.config.maxBodyBytes);
  const found: FoundDemo | undefined = await app.store.load(request);
  if (!found || !(await verifyCsrf(app.deps, found.value, { token: form.csrf, purpose: `demo:${action}` }))) {
    throw invalidRequest("The demo has expired; start it again", { status: 403 });
  }
  const current: DemoState = { ...found.state, error: undefined };
  const { refreshToken, accessToken } = current;
  if (!refreshToken || !accessToken) throw invalidRequest("The demo holds no tokens; start it again");
  return { found, current, refreshToken, accessToken };
}

/** One token-endpoint call as the demo client; on success it stores the tokens and runs the query. */
async function tokenCall(app: DemoApp, current: DemoState, title: string, body: Record<string, string>): Promise<DemoStep[]> {
  const result = await callJson(app.deps, "/oauth/token", { ...body, client_id: app.demo.clientId, client_secret: app.demo.clientSecret });
  const steps: DemoStep[] = [{ title, status: result.status, body: masked(result.body) }];
  const access = stringField(result.body, "access_token");
  if (result.status !== 200 || !access) return steps;
  current.accessToken = access;
  current.refreshToken = stringField(result.body, "refresh_token");
  return [await queryFields(app.deps, access), ...steps];
}

/** The demo's GraphQL query with a bearer token, as one rendered step. */
async function queryFields(deps: Deps, accessToken: string): Promise<DemoStep> {
  const result = await callJson(deps, "/graphql", { query: QUERY }, { authorization: `Bearer ${accessToken}` });
  return { title: `POST /graphql ${QUERY}`, status: result.status, body: masked(result.body) };
}

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
