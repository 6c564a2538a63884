// createApp(options) -> { fetch }: the route table and the one error boundary; every runtime serves this.
import type { Config } from "./config.ts";
import { cryptoRandom, jsonLog, systemClock, type Clock, type Deps, type Digest, type Log, type Random, type DemoCredentials } from "./deps.ts";
import type { Store } from "./store/store.ts";
import { pbkdf2Sha256, sha256Hex } from "./crypto/hash.ts";
import { createThrottle, isIpAddress, UNKNOWN_ADDRESS } from "./http/throttle.ts";
import { createMetrics, methodLabel, UNMATCHED_ROUTE } from "./http/metrics.ts";
import { metricsRoutes } from "./app/metrics_route.ts";
import { createRouter, type RequestContext, type Route, type Surface } from "./http/router.ts";
import { requestUrl } from "./http/host.ts";
import { html, json, jsonNoStore } from "./http/respond.ts";
import { isHttpError, type HttpError } from "./http/errors.ts";
import { isOAuthError, temporarilyUnavailable } from "./oauth/errors.ts";
import { isStoreBusy, isStoreClosed, storageFaultOf } from "./store/errors.ts";
import { oauthRoutes } from "./oauth/routes.ts";
import { graphqlRoutes } from "./graphql/endpoint.ts";
import { uiRoutes } from "./ui/routes.ts";
import { errorViewOf, renderErrorPage, type Refusal } from "./ui/error_page.ts";
import { isSecureOrigin } from "./ui/cookies.ts";

export interface AppOptions {
  config: Readonly<Config>;
  store: Store;
  clock?: Clock;
  random?: Random;
  log?: Log;
  digest?: Digest;
  demo?: DemoCredentials;
}

/** What the adapter knows about the connection. */
export interface ConnectionInfo {
  /**
   * The caller's IP address (the socket's peer). Without it (or with anything but an IP address) failed client
   * authentication and sign-in are throttled per username only, and `client_address_unknown` is logged once.
   */
  remoteAddress?: string;
}

export interface App {
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /**
   * Shuts the app down for an embedder: requests from now on get 503 temporarily_unavailable, the ones in flight
   * finish, then the store closes (its queued writes committed). `serve` closes its listener first instead.
   */
  close(): Promise<void>;
  readonly deps: Deps;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * How long /healthz reports a storage fault after a request last met one. A read (ping) succeeds on a full disk
 * or a read-only file while every write fails; without this the service looked healthy. Bounded, so that a load
 * balancer that stops sending requests sees the service again and its next write finds out whether it recovered.
 */
const STORAGE_FAULT_REPORT_MS = 10_000;
const HSTS = "max-age=31536000";

/** The storage fault requests met last, and when (ms on the app's clock). */
interface StorageFaults {
  last?: { fault: string; at: number };
}

function healthRoutes(deps: Deps, faults: StorageFaults): Route[] {
  return [{
    method: "GET",
    path: "/healthz",
    handler: async () => {
      const recent = faults.last && deps.clock() - faults.last.at < STORAGE_FAULT_REPORT_MS ? faults.last : undefined;
      const ok = !recent && await deps.store.ping();
      const body = recent ? { status: "unavailable", database: recent.fault } : { status: ok ? "ok" : "unavailable" };
      return json(body, ok ? 200 : 503, { "cache-control": "no-store" });
    },
  }];
}

/**
 * A transport refusal as the client reads it: the wire code of a malformed request or an unsupported body type is
 * RFC 6749's invalid_request (its status stays 400 or 415), so OAuth clients parse it as any other.
 */
function refusalOf(error: HttpError): Refusal {
  const code = error.code === "bad_request" || error.code === "unsupported_media_type" ? "invalid_request" : error.code;
  return { code, status: error.status, description: error.description, headers: error.headers };
}

function renderError(error: Refusal, surface: Surface, requestId: string): Response {
  if (surface === "html") return html(renderErrorPage(errorViewOf(error, requestId)), error.status, error.headers);
  return jsonNoStore({ error: error.code, error_description: error.description }, error.status, error.headers);
}

function renderServerError(surface: Surface, requestId: string): Response {
  if (surface === "html") {
    const page = renderErrorPage({ status: 500, title: "Something went wrong", message: "The server could not complete the request.", requestId });
    return html(page, 500);
  }
  return jsonNoStore({ error: "server_error", error_description: "The server could not complete the request" }, 500);
}

/**
 * The client's address. Behind exactly one trusted proxy it is the right-most X-Forwarded-For entry: the proxy
 * appends the address it saw (nginx's $proxy_add_x_forwarded_for), everything left of it is whatever the client
 * sent. A value that is not one IP address falls back to the socket address rather than becoming a throttle key.
 */
function clientAddress(request: Request, info: ConnectionInfo | undefined, trustProxy: boolean): string {
  const remote = info?.remoteAddress;
  // Checked like a forwarded one: an embedder's value reaches throttle keys and the audit trail.
  const socket = remote !== undefined && isIpAddress(remote) ? remote : UNKNOWN_ADDRESS;
  const forwarded = trustProxy ? request.headers.get("x-forwarded-for") : null;
  if (forwarded === null) return socket;
  const last = forwarded.slice(forwarded.lastIndexOf(",") + 1).trim();
  return isIpAddress(last) ? last : socket;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** A random 16-hex-digit request id from the app's own randomness. */
function newRequestId(random: Random): string {
  let id = "";
  for (const byte of random(8)) id += HEX_BYTE[byte]!;
  return id;
}

/** Builds the application from its collaborators; nothing here listens on a socket or starts a timer. */
export function createApp(options: AppOptions): App {
  const deps: Deps = {
    config: options.config,
    store: options.store,
    clock: options.clock ?? systemClock,
    random: options.random ?? cryptoRandom,
    log: options.log ? sheltered(options.log) : jsonLog,
    digest: options.digest ?? sha256Hex,
    pbkdf2: pbkdf2Sha256,
    throttle: createThrottle({
      maxFailures: options.config.throttleMaxFailures,
      windowSeconds: options.config.throttleWindowSeconds,
    }),
    metrics: createMetrics(),
    demo: options.config.demo ? options.demo : undefined,
    selfFetch: (request) => fetch(request),
  };
  const faults: StorageFaults = {};
  const router = createRouter([
    ...healthRoutes(deps, faults), ...oauthRoutes(deps), ...graphqlRoutes(deps), ...uiRoutes(deps), ...metricsRoutes(deps),
  ]);
  let warnedUnknownAddress = false;
  // Requests being answered, and close()'s wait for them to end.
  let inFlight = 0;
  let closing = false;
  let endDrain!: () => void;
  const drained = new Promise<void>((resolve) => (endDrain = resolve));
  let storeClosed: Promise<void> | undefined;
  // Behind TLS (an https base URL) browsers are told to use nothing else for a year (RFC 6797); the header is
  // ignored over plain http, and the operator's domain, not ours, decides includeSubDomains.
  const https = isSecureOrigin(deps.config);

  /** Routes the request and runs its handler; any failure becomes the answer its surface (JSON, HTML) expects. */
  async function dispatch(request: Request, ctx: RequestContext): Promise<{ response: Response; routeLabel: string }> {
    const { url, requestId } = ctx;
    // Metrics label: the route's own path, never the raw one, so label cardinality stays bounded.
    let routeLabel = UNMATCHED_ROUTE;
    try {
      if (closing) throw temporarilyUnavailable();
      const route = router.match(request.method, url.pathname);
      routeLabel = route.path;
      return { response: await route.handler(request, ctx), routeLabel };
    } catch (error) {
      const surface: Surface = router.surfaceOf(url.pathname, request);
      if (isHttpError(error)) {
        // A 405 means the path is a registered route, so it is a bounded label too.
        if (error.code === "method_not_allowed") routeLabel = url.pathname;
        return { response: renderError(refusalOf(error), surface, requestId), routeLabel };
      }
      if (isOAuthError(error)) return { response: renderError(error, surface, requestId), routeLabel };
      if (isStoreClosed(error)) {
        // The store was closed under requests still running (App.close() waits for them instead).
        deps.log("database_closed", { request_id: requestId, path: url.pathname });
        return { response: renderError(temporarilyUnavailable(), surface, requestId), routeLabel };
      }
      if (isStoreBusy(error)) {
        // Another connection (the CLI, an sqlite3 shell, another worker) held the write lock past the busy
        // timeout: a condition to retry, not a fault of ours or the client's.
        deps.log("database_busy", { request_id: requestId, path: url.pathname });
        return { response: renderError(temporarilyUnavailable(), surface, requestId), routeLabel };
      }
      const fault = storageFaultOf(error);
      if (fault) {
        // Disk full, a read-only file, an I/O error, a corrupt page: the operator's to fix, and every write meets
        // it until then. 503 (retry later), no stack: the message is the cause. /healthz reports it too.
        faults.last = { fault, at: deps.clock() };
        deps.log("database_unavailable", { request_id: requestId, path: url.pathname, fault, error: (error as Error).message });
        return { response: renderError(temporarilyUnavailable(10), surface, requestId), routeLabel };
      }
      // Unknown failure: log the cause for operators, tell the client nothing about it.
      deps.log("request_failed", {
        request_id: requestId,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      return { response: renderServerError(surface, requestId), routeLabel };
    }
  }

  async function fetch(request: Request, info?: ConnectionInfo): Promise<Response> {
    const started = performance.now();
    const incomingId = request.headers.get("x-request-id");
    const requestId = incomingId && REQUEST_ID.test(incomingId) ? incomingId : newRequestId(deps.random);
    const url = requestUrl(request);
    if (!url) return malformed(request, requestId, started);
    const ctx: RequestContext = { url, requestId, clientIp: clientAddress(request, info, deps.config.trustProxy) };
    if (ctx.clientIp === UNKNOWN_ADDRESS && !warnedUnknownAddress) {
      warnedUnknownAddress = true;
      deps.log("client_address_unknown", {
        advice: "pass { remoteAddress } as app.fetch's second argument: without it failures are throttled per username only",
      });
    }
    let dispatched: Awaited<ReturnType<typeof dispatch>>;
    inFlight++;
    try {
      dispatched = await dispatch(request, ctx);
    } finally {
      if (--inFlight === 0 && closing) endDrain();
    }
    // node:http and Deno.serve drop a HEAD response's body themselves; an embedder forwarding it by hand would not.
    const response = request.method === "HEAD" && dispatched.response.body ? await withoutBody(dispatched.response) : dispatched.response;
    // Logged under its route, as the metrics count it: a path that matched none is "unmatched", because clients put
    // tokens and e-mail addresses in mistaken paths (/oauth/token/<token>, /users/<e-mail>). Routes are exact
    // paths without parameters, so a route's path holds nothing the client chose.
    return finish(request, response, { requestId, started, routeLabel: dispatched.routeLabel, path: dispatched.routeLabel });
  }

  /** A request whose URL cannot be trusted or parsed (http/host.ts): 400, logged without a path. */
  function malformed(request: Request, requestId: string, started: number): Response {
    const response = jsonNoStore({ error: "invalid_request", error_description: "Malformed HTTP request" }, 400);
    return finish(request, response, { requestId, started, routeLabel: UNMATCHED_ROUTE, path: undefined });
  }

  /** The headers every answer carries, its metrics and its log line. */
  function finish(
    request: Request,
    response: Response,
    done: { requestId: string; started: number; routeLabel: string; path: string | undefined },
  ): Response {
    response.headers.set("x-request-id", done.requestId);
    if (!response.headers.has("x-content-type-options")) response.headers.set("x-content-type-options", "nosniff");
    if (https) response.headers.set("strict-transport-security", HSTS);
    const seconds = (performance.now() - done.started) / 1000;
    deps.metrics.observeRequest(done.routeLabel, request.method, response.status, seconds);
    // Only the path: query strings can carry codes and state, which must never reach the log.
    deps.log("request", {
      request_id: done.requestId,
      method: methodLabel(request.method),
      path: done.path,
      status: response.status,
      duration_ms: Math.round(seconds * 100_000) / 100,
    });
    return response;
  }

  async function close(): Promise<void> {
    closing = true;
    if (inFlight === 0) endDrain();
    await drained;
    await (storeClosed ??= deps.store.close());
  }

  return { fetch, close, deps };
}

/**
 * A HEAD answer: the GET's status and headers without its body, and with the Content-Length the GET would have
 * sent (RFC 9110 §8.6, §9.3.2). A null body alone is not enough: Deno.serve then writes `content-length: 0`, which
 * tells a client the resource is empty. A body that cannot be read leaves the length out.
 */
async function withoutBody(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  try {
    headers.set("content-length", String((await response.arrayBuffer()).byteLength));
  } catch {
    headers.delete("content-length");
  }
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

/** The embedder's log function, kept from failing a request: a throwing or rejecting sink loses the line, not the answer. */
function sheltered(log: Log): Log {
  return (event, fields) => {
    try {
      const result: unknown = log(event, fields);
      if (result instanceof Promise) result.catch(() => {});
    } catch {
      // The line is lost; the request it describes may already have committed (a token issued), so it goes on.
    }
  };
}
