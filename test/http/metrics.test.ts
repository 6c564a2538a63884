import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createMetrics, LATENCY_BUCKETS } from "../../src/http/metrics.ts";
import { openTestApp } from "../helpers/test_app.ts";
import { BASE } from "../helpers/requests.ts";

/** The sample lines of the rendered registry as name{labels} -> value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

test("a fresh registry renders HELP and TYPE for every metric and no samples", () => {
  const text = createMetrics().render();
  for (const name of [
    "fieldgate_http_requests_total",
    "fieldgate_http_request_duration_seconds",
    "fieldgate_throttled_requests_total",
    "fieldgate_tokens_issued_total",
    "fieldgate_tokens_refreshed_total",
    "fieldgate_tokens_revoked_total",
    "fieldgate_reuse_detections_total",
  ]) {
    assert.match(text, new RegExp(`^# HELP ${name} `, "m"));
    assert.match(text, new RegExp(`^# TYPE ${name} (counter|histogram)$`, "m"));
  }
  assert.equal(samples(text).size, 0);
  assert.ok(text.endsWith("\n"));
});

test("requests are counted by route, method and status", () => {
  const m = createMetrics();
  m.observeRequest("/oauth/token", "POST", 200, 0.002);
  m.observeRequest("/oauth/token", "POST", 200, 0.003);
  m.observeRequest("/oauth/token", "POST", 400, 0.001);
  const s = samples(m.render());
  assert.equal(s.get('fieldgate_http_requests_total{route="/oauth/token",method="POST",status="200"}'), 2);
  assert.equal(s.get('fieldgate_http_requests_total{route="/oauth/token",method="POST",status="400"}'), 1);
});

test("the latency histogram is cumulative with +Inf, sum and count", () => {
  const m = createMetrics();
  m.observeRequest("/graphql", "POST", 200, 0.004);
  m.observeRequest("/graphql", "POST", 200, 0.2);
  m.observeRequest("/graphql", "POST", 200, 60);
  const s = samples(m.render());
  const bucket = (le: string) => s.get(`fieldgate_http_request_duration_seconds_bucket{route="/graphql",le="${le}"}`);
  assert.equal(bucket("0.001"), 0);
  assert.equal(bucket("0.005"), 1);
  assert.equal(bucket("0.25"), 2);
  assert.equal(bucket(String(LATENCY_BUCKETS.at(-1))), 2);
  assert.equal(bucket("+Inf"), 3);
  assert.equal(s.get('fieldgate_http_request_duration_seconds_count{route="/graphql"}'), 3);
  assert.ok(Math.abs(s.get('fieldgate_http_request_duration_seconds_sum{route="/graphql"}')! - 60.204) < 1e-9);
});

test("429 responses count as throttled requests", () => {
  const m = createMetrics();
  m.observeRequest("/oauth/token", "POST", 429, 0.001);
  m.observeRequest("/oauth/token", "POST", 401, 0.001);
  assert.equal(samples(m.render()).get('fieldgate_throttled_requests_total{route="/oauth/token"}'), 1);
});

const auditRows = [
  { event: "token_issued", detail: { grant_type: "client_credentials" }, sample: 'fieldgate_tokens_issued_total{grant="client_credentials"}' },
  { event: "token_issued", detail: { grant_type: "authorization_code" }, sample: 'fieldgate_tokens_issued_total{grant="authorization_code"}' },
  { event: "token_refreshed", detail: {}, sample: 'fieldgate_tokens_refreshed_total{grant="refresh_token"}' },
  { event: "token_refreshed", detail: {}, sample: 'fieldgate_tokens_issued_total{grant="refresh_token"}' },
  { event: "token_revoked", detail: { kind: "refresh" }, sample: 'fieldgate_tokens_revoked_total{kind="refresh"}' },
  { event: "token_revoked", detail: { kind: "access" }, sample: 'fieldgate_tokens_revoked_total{kind="access"}' },
  { event: "token_revoked", detail: {}, sample: 'fieldgate_tokens_revoked_total{kind="other"}' },
  { event: "refresh_reuse_detected", detail: null, sample: 'fieldgate_reuse_detections_total{kind="refresh_token"}' },
  { event: "code_reuse_detected", detail: null, sample: 'fieldgate_reuse_detections_total{kind="authorization_code"}' },
];
for (const row of auditRows) {
  test(`audit event ${row.event} ${JSON.stringify(row.detail)} increments ${row.sample}`, () => {
    const m = createMetrics();
    m.recordAuditEvent(row.event, row.detail);
    assert.equal(samples(m.render()).get(row.sample), 1);
  });
}

test("audit events without a counter change nothing", () => {
  const m = createMetrics();
  m.recordAuditEvent("sign_in_failed", { reason: "bad_password" });
  assert.equal(samples(m.render()).size, 0);
});

test("unknown grant and kind label values fold into other", () => {
  const m = createMetrics();
  m.tokenIssued("x".repeat(500));
  m.tokenIssued("password");
  m.reuseDetected("session");
  const s = samples(m.render());
  assert.equal(s.get('fieldgate_tokens_issued_total{grant="other"}'), 2);
  assert.equal(s.get('fieldgate_reuse_detections_total{kind="other"}'), 1);
});

test("the method label keeps the seven methods we know and folds every other method into other", () => {
  const m = createMetrics();
  const known = ["GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE", "PATCH"];
  for (const method of known) m.observeRequest("/graphql", method, 200, 0.001);
  for (let i = 0; i < 100; i++) m.observeRequest("/graphql", `X-METHOD-${i}`, 405, 0.001);
  m.observeRequest("/graphql", "patch", 405, 0.001);
  const s = samples(m.render());
  for (const method of known) assert.equal(s.get(`fieldgate_http_requests_total{route="/graphql",method="${method}",status="200"}`), 1);
  assert.equal(s.get('fieldgate_http_requests_total{route="/graphql",method="other",status="405"}'), 101);
  assert.equal([...s.keys()].filter((k) => k.startsWith("fieldgate_http_requests_total")).length, known.length + 1);
});

test("an arbitrary request method through the app never becomes a label value", async () => {
  const { app } = await openTestApp();
  const res = await app.fetch(new Request(`${BASE}/healthz`, { method: "PROPFIND-X1" }));
  assert.equal(res.status, 405);
  const text = app.deps.metrics.render();
  assert.ok(!text.includes("PROPFIND"), "the raw method is not a label");
  assert.equal(samples(text).get('fieldgate_http_requests_total{route="/healthz",method="other",status="405"}'), 1);
});

test("label values are escaped per the exposition format", () => {
  const m = createMetrics();
  m.observeRequest('a"b\\c\nd', "GET", 200, 0.001);
  assert.ok(m.render().includes('route="a\\"b\\\\c\\nd"'));
});

test("two registries never share counts", () => {
  const a = createMetrics();
  const b = createMetrics();
  a.tokenIssued("client_credentials");
  assert.equal(samples(b.render()).size, 0);
});

test("a latency exactly on a bucket bound counts in that bucket, and repeated label sets share one sample", () => {
  const m = createMetrics();
  m.observeRequest("/healthz", "GET", 200, 0.001);
  m.observeRequest("/healthz", "GET", 200, 0.0010001);
  m.observeRequest("/healthz", "BREW", 200, 0.5);
  const s = samples(m.render());
  assert.equal(s.get('fieldgate_http_request_duration_seconds_bucket{route="/healthz",le="0.001"}'), 1);
  assert.equal(s.get('fieldgate_http_request_duration_seconds_bucket{route="/healthz",le="0.0025"}'), 2);
  assert.equal(s.get('fieldgate_http_request_duration_seconds_bucket{route="/healthz",le="0.5"}'), 3);
  assert.equal(s.get('fieldgate_http_requests_total{route="/healthz",method="GET",status="200"}'), 2);
  assert.equal(s.get('fieldgate_http_requests_total{route="/healthz",method="other",status="200"}'), 1);
});
