// Drives one scenario with autocannon: a warm-up, then a timed run whose every response time is recorded here.
import autocannon from "autocannon";
import type { AutocannonClient, AutocannonInstance, AutocannonRequest, AutocannonResult } from "autocannon";
import { createRecorder, summarise, type LatencySummary } from "./stats.ts";

export interface LoadScenario {
  /** Base URL of the server, e.g. http://127.0.0.1:8123. */
  origin: string;
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A fresh body per request (refresh rotation needs a new refresh token each time); undefined when exhausted. */
  nextBody?: () => string | undefined;
  /** Headers added to each request as it is sent (a DPoP proof is accepted once, so each request needs its own). */
  nextHeaders?: () => Record<string, string>;
  /** A 2xx body that fails this check counts as a failure too (GraphQL reports errors with status 200). */
  verifyBody?: (body: string) => boolean;
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /** CPU seconds the server process has used so far; sampled around the measured phase. */
  serverCpuSeconds?: () => number;
  /**
   * Servers sharing the load, as instances behind a load balancer (default the scenario's origin alone): the
   * connections are dealt over them, one autocannon per server, all driven by one `nextBody`.
   */
  origins?: readonly string[];
  /** CPU seconds the database server has used so far (PostgreSQL's processes); sampled like `serverCpuSeconds`. */
  databaseCpuSeconds?: () => number;
  /**
   * The servers' own counts so far of round trips to their database and of requests answered (their /metrics);
   * sampled likewise. Both come from the servers, so a request still in flight at either sample counts on both sides.
   */
  databaseRoundTrips?: () => Promise<{ roundTrips: number; requests: number }>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /** Responses with a status outside 200–299. */
  non2xx: number;
  /** 2xx responses whose body failed `verifyBody`. */
  mismatches: number;
  /** Connection errors and timeouts reported by autocannon. */
  errors: number;
  statusCodes: Record<string, number>;
  /** True when `nextBody` ran dry before the time was up (the run stopped early). */
  exhausted: boolean;
  latency: LatencySummary;
  /**
   * Server CPU time (user + system) per response in microseconds: less sensitive than requests/s to other load on
   * the machine, so it shows what an optimisation saved even when the machine is busy.
   */
  serverCpuUsPerRequest: number;
  /** Database server CPU time per response in microseconds, when `databaseCpuSeconds` was given. */
  databaseCpuUsPerRequest?: number;
  /** Database round trips per response, when `databaseRoundTrips` was given. */
  roundTripsPerRequest?: number;
}

interface Phase {
  result: AutocannonResult;
  seconds: number;
  exhausted: boolean;
}

/** Warm-up (discarded) then the measured run; latencies are the per-response times autocannon observes. */
export async function runLoad(scenario: LoadScenario, options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSeconds > 0) {
    await phase(scenario, { ...options, durationSeconds: options.warmupSeconds }, () => {});
  }
  const times = createRecorder();
  const statusCodes: Record<string, number> = {};
  let non2xx = 0;
  const cpuBefore = options.serverCpuSeconds?.() ?? Number.NaN;
  const databaseCpuBefore = options.databaseCpuSeconds?.();
  const roundTripsBefore = await options.databaseRoundTrips?.();
  const measured = await phase(scenario, options, (status, ms) => {
    times.record(ms);
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status < 200 || status > 299) non2xx++;
  });
  const requests = times.length;
  const cpuSeconds = (options.serverCpuSeconds?.() ?? Number.NaN) - cpuBefore;
  const databaseCpuAfter = options.databaseCpuSeconds?.();
  const databaseCpu = databaseCpuBefore === undefined || databaseCpuAfter === undefined
    ? undefined
    : round(((databaseCpuAfter - databaseCpuBefore) * 1e6) / requests, 1);
  const roundTripsAfter = await options.databaseRoundTrips?.();
  const roundTrips = roundTripsBefore === undefined || roundTripsAfter === undefined
    ? undefined
    : round((roundTripsAfter.roundTrips - roundTripsBefore.roundTrips) / (roundTripsAfter.requests - roundTripsBefore.requests), 2);
  return {
    requests,
    seconds: round(measured.seconds, 3),
    requestsPerSecond: Math.round(requests / measured.seconds),
    non2xx,
    mismatches: measured.result.mismatches,
    errors: measured.result.errors + measured.result.timeouts,
    statusCodes,
    exhausted: measured.exhausted,
    latency: summarise(times.values()),
    serverCpuUsPerRequest: round((cpuSeconds * 1e6) / requests, 1),
    ...(databaseCpu === undefined ? {} : { databaseCpuUsPerRequest: databaseCpu }),
    ...(roundTrips === undefined ? {} : { roundTripsPerRequest: roundTrips }),
  };
}

/**
 * Several runs of one load as one result: counts summed, req/s over the summed time, CPU per request and the
 * latency percentiles as request-weighted means of the runs' own (an approximation: the runs' response times are
 * not kept), the largest maximum. Used for a reference measured before and after the scenario it is compared with.
 */
export function combineRuns(runs: readonly LoadResult[]): LoadResult {
  if (runs.length === 0) throw new RangeError("combineRuns needs at least one run");
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const weighted = (pick: (r: LoadResult) => number) =>
    requests === 0 ? Number.NaN : runs.reduce((sum, r) => sum + pick(r) * r.requests, 0) / requests;
  const statusCodes: Record<string, number> = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    requests,
    seconds: round(seconds, 3),
    requestsPerSecond: seconds > 0 ? Math.round(requests / seconds) : 0,
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    mismatches: runs.reduce((n, r) => n + r.mismatches, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    statusCodes,
    exhausted: runs.some((r) => r.exhausted),
    latency: {
      count: requests,
      p50: weighted((r) => r.latency.p50),
      p99: weighted((r) => r.latency.p99),
      max: Math.max(...runs.map((r) => r.latency.max)),
      mean: weighted((r) => r.latency.mean),
    },
    serverCpuUsPerRequest: round(weighted((r) => r.serverCpuUsPerRequest), 1),
    ...(runs.every((r) => r.databaseCpuUsPerRequest !== undefined)
      ? { databaseCpuUsPerRequest: round(weighted((r) => r.databaseCpuUsPerRequest!), 1) }
      : {}),
    ...(runs.every((r) => r.roundTripsPerRequest !== undefined)
      ? { roundTripsPerRequest: round(weighted((r) => r.roundTripsPerRequest!), 2) }
      : {}),
  };
}

/** One timed run: one autocannon per origin, each with its share of the connections, started and stopped together. */
async function phase(
  scenario: LoadScenario,
  options: Pick<LoadOptions, "connections" | "durationSeconds" | "origins">,
  onResponse: (status: number, ms: number) => void,
): Promise<Phase> {
  const origins = options.origins?.length ? options.origins : [scenario.origin];
  const instances: AutocannonInstance[] = [];
  let exhausted = false;
  const request: AutocannonRequest = {
    method: scenario.method,
    path: scenario.path,
    headers: scenario.headers,
    body: scenario.body,
  };
  const next = scenario.nextBody;
  const nextHeaders = scenario.nextHeaders;
  if (next || nextHeaders) {
    request.setupRequest = (req) => {
      const body = next ? next() : req.body;
      if (body === undefined) {
        exhausted = true;
        for (const instance of instances) instance.stop();
        return req;
      }
      return nextHeaders ? { ...req, body, headers: { ...req.headers, ...nextHeaders() } } : { ...req, body };
    };
  }
  const started = performance.now();
  const results = await Promise.all(origins.map((origin, i) =>
    new Promise<AutocannonResult>((resolve, reject) => {
      instances.push(autocannon({
        url: origin,
        // Dealt in turn, so N connections over M servers differ by at most one per server.
        connections: Math.max(1, Math.floor(options.connections / origins.length) + (i < options.connections % origins.length ? 1 : 0)),
        duration: options.durationSeconds,
        timeout: 10,
        requests: [request],
        setupClient: (client: AutocannonClient) => {
          client.on("response", (status, _bytes, ms) => onResponse(status, ms));
        },
        verifyBody: scenario.verifyBody,
      }, (error, result) => (error ? reject(error) : resolve(result))));
    })
  ));
  const sum = (pick: (r: AutocannonResult) => number) => results.reduce((n, r) => n + pick(r), 0);
  const result = { ...results[0]!, errors: sum((r) => r.errors), timeouts: sum((r) => r.timeouts), mismatches: sum((r) => r.mismatches), non2xx: sum((r) => r.non2xx) };
  return { result, seconds: (performance.now() - started) / 1000, exhausted };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
