// createApp(options) -> { fetch }: the route table and the one error boundary; every runtime serves this.
import { SIGN_IN_LIMIT_WINDOW_SECONDS, type Config } from "./config.ts";
import {
  cryptoRandom, jsonLog, systemClock, type BcryptService, type BlockCipherFactory, type Clock, type Deps, type Digest,
  type Hmac, type Log, type Random, type DemoCredentials, type TextResponse,
} from "./deps.ts";
import type { Store } from "./store/contract.ts";
import { pbkdf2Sha256, sha256Hex } from "./crypto/hash.ts";
import { verifyBcrypt } from "./crypto/bcrypt.ts";
import { hmacSha256Base64Url } from "./crypto/hmac.ts";
import { webCryptoBlockCipher } from "./crypto/block_cipher.ts";
import { UNKNOWN_ADDRESS } from "./http/throttle.ts";
import { createWorkLimit, defaultPasswordConcurrency } from "./http/work_limit.ts";
import { createMetrics, UNMATCHED_ROUTE } from "./http/metrics.ts";
import type { RequestContext, Surface } from "./http/router.ts";
import { requestUrl } from "./http/host.ts";
import { createResponders, standardTextResponse } from "./http/respond.ts";
import { isHttpError } from "./http/errors.ts";
import { isOAuthError, temporarilyUnavailable } from "./oauth/errors.ts";
import { createDpopNonces } from "./oauth/dpop_nonce.ts";
import { createDrain } from "./app/drain.ts";
import { createFinisher } from "./app/finish.ts";
import { answerFor } from "./app/head.ts";
import type { StorageFaults } from "./app/health_route.ts";
import { refusalOf, renderError, renderServerError } from "./app/render_error.ts";
import { clientAddress, requestIdOf } from "./app/request_facts.ts";
import { createRouteTable } from "./app/route_table.ts";
import { createSharedThrottle } from "./app/shared_throttle.ts";
import { classifyStoreFailure } from "./app/store_failure.ts";

export interface AppOptions {
  config: Readonly<Config>;
  store: Store;
  clock?: Clock;
  random?: Random;
  log?: Log;
  digest?: Digest;
  hmac?: Hmac;
  /**
   * CPU cores this process may use (its share with `serve --workers`); sizes the default password concurrency.
   * Default 2, the smallest machine fieldgate is sized for: one derivation at a time.
   */
  cores?: number;
  blockCipher?: BlockCipherFactory;
  /**
   * Makes the JSON answers' Responses; default the standard Response. `app.fetch` hands back what it makes, so only
   * a server adapter that reads its own kind passes one (the Node adapter's light responses).
   */
  textResponse?: TextResponse;
  /**
   * bcrypt checks of imported password digests off the event loop (`serve` passes worker threads); the app closes it
   * in close(). Default: bcryptjs on the calling thread, which holds the loop for up to 100 ms at a time.
   */
  bcrypt?: BcryptService;
  demo?: DemoCredentials;
  /** The fieldgate release serving, for the `fieldgate_build_info` gauge; the adapters pass package.json's. */
  version?: string;
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
   * finish, then the bcrypt threads end and the store closes (its queued writes committed). `serve` closes its
   * listener first instead.
   */
  close(): Promise<void>;
  readonly deps: Deps;
}

/** Where a failure happened: the app's collaborators, its fault record, the route's surface and the request. */
interface FailureSite {
  deps: Deps;
  faults: StorageFaults;
  surface: Surface;
  ctx: RequestContext;
}

/** The one error boundary: refusals rendered for their surface, store conditions as 503, anything else a bare 500. */
function answerFailure(error: unknown, { deps, faults, surface, ctx }: FailureSite): Response {
  const { requestId, url } = ctx;
  const target = { surface, requestId, respond: deps.respond };
  if (isHttpError(error)) return renderError(refusalOf(error), target);
  if (isOAuthError(error)) return renderError(error, target);
  const store = classifyStoreFailure(error);
  if (store) {
    if (store.fault && !store.pinged) faults.last = { fault: store.fault, at: deps.clock(), degraded: store.degraded === true };
    deps.metrics.storeFailure(store.event);
    const fields = store.fault ? { fault: store.fault, error: (error as Error).message } : {};
    deps.log(store.event, { request_id: requestId, path: url.pathname, ...fields });
    return renderError(temporarilyUnavailable(store.retryAfter), target);
  }
  // Unknown failure: log the cause for operators, tell the client nothing about it.
  deps.log("request_failed", {
    request_id: requestId,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  return renderServerError(target);
}

/** Builds the application from its collaborators; nothing here listens on a socket or starts a timer. */
export function createApp(options: AppOptions): App {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const deps: Deps = {
    config: options.config,
    store: options.store,
    clock,
    random,
    log: options.log ? sheltered(options.log) : jsonLog,
    digest: options.digest ?? sha256Hex,
    hmac: options.hmac ?? hmacSha256Base64Url,
    blockCipher: options.blockCipher ?? webCryptoBlockCipher,
    pbkdf2: pbkdf2Sha256,
    bcrypt: options.bcrypt?.verify ?? verifyBcrypt,
    ...throttles(options),
    passwordWork: createWorkLimit({
      concurrency: options.config.passwordConcurrency ?? defaultPasswordConcurrency(options.cores ?? 2),
      queue: options.config.passwordQueue,
    }),
    metrics: createMetrics(),
    respond: createResponders(options.textResponse ?? standardTextResponse),
    demo: options.config.demo ? options.demo : undefined,
    selfFetch: (request) => fetch(request),
    version: options.version ?? "unknown",
    dpopNonces: createDpopNonces({ store: options.store, clock, random, config: options.config }),
  };
  const faults: StorageFaults = {};
  const router = createRouteTable(deps, faults);
  const drain = createDrain();
  const finish = createFinisher(deps);
  let warnedUnknownAddress = false;
  let released: Promise<void> | undefined;

  /** Routes the request and runs its handler; any failure becomes the answer its surface (JSON, HTML) expects. */
  async function dispatch(request: Request, ctx: RequestContext): Promise<{ response: Response; routeLabel: string }> {
    // Metrics label: the route's own path, never the raw one, so label cardinality stays bounded.
    let routeLabel = UNMATCHED_ROUTE;
    try {
      if (drain.closing) throw temporarilyUnavailable();
      const route = router.match(request.method, ctx.url.pathname);
      routeLabel = route.path;
      return { response: await route.handler(request, ctx), routeLabel };
    } catch (error) {
      // A 405 means the path is a registered route, so it is a bounded label too.
      if (isHttpError(error) && error.code === "method_not_allowed") routeLabel = ctx.url.pathname;
      const surface = router.surfaceOf(ctx.url.pathname, request);
      return { response: answerFailure(error, { deps, faults, surface, ctx }), routeLabel };
    }
  }

  async function fetch(request: Request, info?: ConnectionInfo): Promise<Response> {
    const started = performance.now();
    const requestId = requestIdOf(request, deps.random);
    const url = requestUrl(request);
    if (!url) return malformed(request, requestId, started);
    const ctx: RequestContext = { url, requestId, clientIp: clientAddress(request, { remoteAddress: info?.remoteAddress, trustProxy: deps.config.trustProxy }) };
    if (ctx.clientIp === UNKNOWN_ADDRESS && !warnedUnknownAddress) {
      warnedUnknownAddress = true;
      deps.log("client_address_unknown", {
        advice: "pass { remoteAddress } as app.fetch's second argument: without it failures are throttled per username only",
      });
    }
    let dispatched: Awaited<ReturnType<typeof dispatch>>;
    drain.enter();
    try {
      dispatched = await dispatch(request, ctx);
    } finally {
      drain.leave();
    }
    const response = await answerFor(request, dispatched.response);
    // Logged under its route, as the metrics count it: a path that matched none is "unmatched", because clients put
    // tokens and e-mail addresses in mistaken paths (/oauth/token/<token>, /users/<e-mail>). Routes are exact
    // paths without parameters, so a route's path holds nothing the client chose.
    return finish(request, response, { requestId, started, routeLabel: dispatched.routeLabel, path: dispatched.routeLabel });
  }

  /** A request whose URL cannot be trusted or parsed (http/host.ts): 400, logged without a path. */
  function malformed(request: Request, requestId: string, started: number): Response {
    const response = deps.respond.jsonNoStore({ error: "invalid_request", error_description: "Malformed HTTP request" }, 400);
    return finish(request, response, { requestId, started, routeLabel: UNMATCHED_ROUTE, path: undefined });
  }

  async function close(): Promise<void> {
    await drain.close();
    await (released ??= (async () => {
      await options.bcrypt?.close();
      await deps.store.close();
    })());
  }

  return { fetch, close, deps };
}

/**
 * The failure throttle and the successful sign-in limit, both counted in the store: every instance on its database
 * (`serve --workers`, servers on one PostgreSQL, embedders' apps) spends one budget, whoever built the app.
 */
function throttles({ config, store }: AppOptions): Pick<Deps, "throttle" | "successfulSignIns"> {
  const failures = { maxFailures: config.throttleMaxFailures, windowSeconds: config.throttleWindowSeconds };
  const successes = { maxFailures: config.signInLimit, windowSeconds: SIGN_IN_LIMIT_WINDOW_SECONDS };
  return {
    throttle: createSharedThrottle(store.throttles, { scope: "failures", ...failures }),
    successfulSignIns: createSharedThrottle(store.throttles, { scope: "sign-ins", ...successes }),
  };
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
