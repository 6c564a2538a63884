// Prometheus metrics: a per-app registry of counters and histograms rendered in the text exposition format 0.0.4.
import type { Metrics } from "../deps.ts";

/** Latency bucket bounds in seconds; token requests sit around 1 ms, PBKDF2 sign-ins around 100 ms. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/** Label value for requests that matched no route, so arbitrary paths never become label values. */
export const UNMATCHED_ROUTE = "unmatched";

// Closed label sets: anything else is folded into "other" so a caller can never grow cardinality without bound.
const GRANTS = new Set(["authorization_code", "refresh_token", "client_credentials"]);
const REUSE_KINDS = new Set(["refresh_token", "authorization_code"]);
const TOKEN_KINDS = new Set(["access", "refresh"]);
// Deno accepts any token as a method (up to tens of kilobytes), so the raw request.method would be a caller-chosen
// label value, log field or error text.
const METHODS = new Set(["GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE", "PATCH"]);

/** The request method as metrics, the log and error texts name it: one of the common methods, or "other". */
export function methodLabel(method: string): string {
  return closed(method, METHODS);
}

interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

function closed(value: unknown, allowed: ReadonlySet<string>): string {
  return typeof value === "string" && allowed.has(value) ? value : "other";
}

// Prometheus label values escape backslash, double quote and newline.
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labels(pairs: Record<string, string>): string {
  const parts = Object.entries(pairs).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

// A counter keyed by its serialised label set, remembering the labels to render them.
function createCounter() {
  const values = new Map<string, { labels: Record<string, string>; value: number }>();
  const entry = (pairs: Record<string, string>) => {
    const key = labels(pairs);
    let found = values.get(key);
    if (!found) values.set(key, (found = { labels: pairs, value: 0 }));
    return found;
  };
  return {
    /** The live entry for a label set, so a hot caller can keep it and add to `value` directly. */
    entry,
    inc(pairs: Record<string, string>, by = 1) {
      entry(pairs).value += by;
    },
    lines(name: string): string[] {
      return [...values.values()].map((e) => `${name}${labels(e.labels)} ${e.value}`);
    },
  };
}

function histogramLines(name: string, byRoute: Map<string, Histogram>): string[] {
  const out: string[] = [];
  for (const [route, h] of byRoute) {
    LATENCY_BUCKETS.forEach((le, i) => out.push(`${name}_bucket${labels({ route, le: String(le) })} ${h.buckets[i]}`));
    out.push(`${name}_bucket${labels({ route, le: "+Inf" })} ${h.count}`);
    out.push(`${name}_sum${labels({ route })} ${h.sum}`);
    out.push(`${name}_count${labels({ route })} ${h.count}`);
  }
  return out;
}

/** A fresh, empty registry; one per app so tests and workers never share counts. */
/** The store conditions the error boundary answers with 503 (app/store_failure.ts), by their log events. */
const STORE_FAILURES = new Set(["database_closed", "database_busy", "database_unavailable", "database_connections_exhausted"]);

export function createMetrics(): Metrics {
  const requests = createCounter();
  const throttled = createCounter();
  const issued = createCounter();
  const refreshed = createCounter();
  const revoked = createCounter();
  const reuse = createCounter();
  const storeFailures = createCounter();
  const latency = new Map<string, Histogram>();
  // Every request lands here: its counter entry is found by one string key instead of serialising labels again.
  const requestEntries = new Map<string, { value: number }>();

  const metrics: Metrics = {
    observeRequest(route, method, status, seconds) {
      const label = methodLabel(method);
      const key = `${route}\u0000${label}\u0000${status}`;
      let counted = requestEntries.get(key);
      if (!counted) requestEntries.set(key, (counted = requests.entry({ route, method: label, status: String(status) })));
      counted.value++;
      // 429 is only ever answered by a throttle (failures, or successful sign-ins), so this covers every throttled surface.
      if (status === 429) throttled.inc({ route });
      observeLatency(latency, route, seconds);
    },
    tokenIssued: (grant) => issued.inc({ grant: closed(grant, GRANTS) }),
    tokenRefreshed: (grant) => refreshed.inc({ grant: closed(grant, GRANTS) }),
    tokenRevoked: (kind) => revoked.inc({ kind: closed(kind, TOKEN_KINDS) }),
    reuseDetected: (kind) => reuse.inc({ kind: closed(kind, REUSE_KINDS) }),
    recordAuditEvent: (event, detail) => recordAuditEvent(metrics, event, detail),
    storeFailure: (event) => storeFailures.inc({ event: closed(event, STORE_FAILURES) }),
    render() {
      return [
        ...section("fieldgate_http_requests_total", "counter", "HTTP requests by route, method and status", requests.lines("fieldgate_http_requests_total")),
        ...section("fieldgate_http_request_duration_seconds", "histogram", "Request latency by route", histogramLines("fieldgate_http_request_duration_seconds", latency)),
        ...section("fieldgate_throttled_requests_total", "counter", "Requests refused with 429 by a throttle", throttled.lines("fieldgate_throttled_requests_total")),
        ...section("fieldgate_tokens_issued_total", "counter", "Access tokens issued by grant type", issued.lines("fieldgate_tokens_issued_total")),
        ...section("fieldgate_tokens_refreshed_total", "counter", "Refresh-token rotations", refreshed.lines("fieldgate_tokens_refreshed_total")),
        ...section("fieldgate_tokens_revoked_total", "counter", "Tokens revoked at /oauth/revoke by kind (a refresh token revokes its family)", revoked.lines("fieldgate_tokens_revoked_total")),
        ...section("fieldgate_reuse_detections_total", "counter", "Replayed refresh tokens or codes (family revoked)", reuse.lines("fieldgate_reuse_detections_total")),
        ...section("fieldgate_store_failures_total", "counter", "Requests answered 503 for a store condition, by its log event", storeFailures.lines("fieldgate_store_failures_total")),
      ].join("\n") + "\n";
    },
  };
  return metrics;
}

/** The release serving, as the constant 1 gauge Prometheus exporters name `*_build_info`, its version a label. */
export function renderBuildInfo(version: string): string {
  return section("fieldgate_build_info", "gauge", "The fieldgate release serving", [`fieldgate_build_info${labels({ version })} 1`])
    .join("\n") + "\n";
}

/** Counts of the work a store asked of its database server, as StoreStats carries them. */
export interface DatabaseCounts {
  roundTrips: number;
  statements: number;
}

/**
 * The database counters in the text format, appended to the registry's; empty without counts (SQLite, in process,
 * has no round trips to count). The store's pool counts them, so each instance reports its own work only.
 */
export function renderDatabaseCounts(counts: DatabaseCounts | undefined): string {
  if (!counts) return "";
  return [
    ...section("fieldgate_database_round_trips_total", "counter", "Waits for the database server (a transaction's BEGIN and COMMIT count)", [`fieldgate_database_round_trips_total ${counts.roundTrips}`]),
    ...section("fieldgate_database_statements_total", "counter", "Statements sent to the database server", [`fieldgate_database_statements_total ${counts.statements}`]),
  ].join("\n") + "\n";
}

/** Adds one latency sample to the route's histogram, creating it on first use. */
function observeLatency(latency: Map<string, Histogram>, route: string, seconds: number): void {
  let h = latency.get(route);
  if (!h) latency.set(route, (h = { buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 }));
  // Buckets are cumulative: every bound at or above the latency counts it, so walk down from the largest.
  for (let i = LATENCY_BUCKETS.length - 1; i >= 0 && seconds <= LATENCY_BUCKETS[i]!; i--) h.buckets[i]!++;
  h.sum += seconds;
  h.count++;
}

/** Maps an audit event onto the token counters it stands for; other events count nothing. */
function recordAuditEvent(metrics: Metrics, event: string, detail: Record<string, unknown> | null | undefined): void {
  const grant = grantOf(detail);
  if (event === "token_issued") metrics.tokenIssued(grant);
  else if (event === "token_refreshed") {
    // A rotation issues a new access token too, so it counts under issued{grant="refresh_token"} as well.
    metrics.tokenIssued("refresh_token");
    metrics.tokenRefreshed("refresh_token");
  } else if (event === "token_revoked") metrics.tokenRevoked(String(detail?.kind));
  else if (event === "refresh_reuse_detected") metrics.reuseDetected("refresh_token");
  else if (event === "code_reuse_detected") metrics.reuseDetected("authorization_code");
}

function grantOf(detail: Record<string, unknown> | null | undefined): string {
  const value = detail?.grant_type ?? detail?.grant;
  return closed(value, GRANTS);
}

function section(name: string, type: string, help: string, lines: string[]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines];
}
