// Tests for the pure parts of `npm run stress` (the script itself never runs in the test suite; nothing here is timed).
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { parse, validate } from "graphql";
import { buildFieldSchema } from "../../src/graphql/schema.ts";
import { innocentMeets } from "../../scripts/lib/stress_queue.ts";
import {
  ATTACK_SELECTIONS,
  expensiveDocument,
  formatPhase,
  graphqlOutcome,
  meetsTarget,
  REPEATS,
  summarizeProbe,
  type AttackVariant,
  type PhaseReport,
} from "../../scripts/lib/stress_report.ts";

const VARIANTS = Object.keys(ATTACK_SELECTIONS) as AttackVariant[];

for (const variant of VARIANTS) {
  test(`stress document "${variant}" is valid GraphQL within the server's token limit`, () => {
    // The server's default FIELDGATE_GRAPHQL_MAX_TOKENS: the attack must get past the parser to cost anything.
    const document = parse(expensiveDocument(variant, 12_345), { maxTokens: 2_000 });
    assert.deepEqual(validate(buildFieldSchema(), document), []);
  });

  test(`stress documents "${variant}" differ in text but not in tokens`, () => {
    const texts = Array.from({ length: 200 }, (_, n) => expensiveDocument(variant, n));
    assert.equal(new Set(texts).size, texts.length);
    const normalized = new Set(texts.map((t) => t.replace(/\s+/g, " ")));
    assert.equal(normalized.size, 1);
    assert.equal(texts[0]!.split(ATTACK_SELECTIONS[variant].trim()).length - 1, REPEATS);
  });
}

test("stress documents refuse a negative or fractional number", () => {
  assert.throws(() => expensiveDocument("refused", -1), RangeError);
  assert.throws(() => expensiveDocument("refused", 1.5), RangeError);
});

const ms = (...values: number[]) => values.map((v) => ({ ms: v, ok: true }));

test("summarizeProbe gives median, p99, max, failures and the ratio to the baseline", () => {
  const samples = [...ms(...Array.from({ length: 99 }, (_, i) => i + 1)), { ms: 1_500, ok: false, outcome: "timeout" }];
  const s = summarizeProbe(samples, 25);
  assert.deepEqual(
    { count: s.count, median: s.median, p99: s.p99, max: s.max, failures: s.failures, slow: s.slow, ratio: s.ratio },
    { count: 100, median: 50, p99: 99, max: 1_500, failures: 1, slow: 1, ratio: 2 },
  );
  assert.deepEqual(s.failedWith, { timeout: 1 });
  assert.equal(s.meets, false);
});

test("summarizeProbe of no samples misses the target", () => {
  const s = summarizeProbe([], 5);
  assert.equal(s.count, 0);
  assert.equal(s.meets, false);
});

const verdicts = [
  { name: "within 3x the baseline", s: { median: 15, max: 900, failures: 0 }, baseline: 5, meets: true },
  { name: "exactly 3x the baseline", s: { median: 15, max: 20, failures: 0 }, baseline: 5, meets: true },
  { name: "past 3x the baseline and over 10 ms", s: { median: 16, max: 20, failures: 0 }, baseline: 5, meets: false },
  { name: "past 3x a tiny baseline but under 10 ms", s: { median: 9.9, max: 20, failures: 0 }, baseline: 1, meets: true },
  { name: "a quick median with one wait past 1 s", s: { median: 2, max: 1_000.1, failures: 0 }, baseline: 2, meets: false },
  { name: "a wait of exactly 1 s", s: { median: 2, max: 1_000, failures: 0 }, baseline: 2, meets: true },
  { name: "a quick median with one failure", s: { median: 2, max: 3, failures: 1 }, baseline: 2, meets: false },
  { name: "no baseline and over 10 ms", s: { median: 11, max: 20, failures: 0 }, baseline: Number.NaN, meets: false },
];

for (const row of verdicts) {
  test(`meetsTarget: ${row.name} ${row.meets ? "meets" : "misses"} the target`, () => {
    assert.equal(meetsTarget({ count: 10, ...row.s }, row.baseline), row.meets);
  });
}

const outcomes = [
  { name: "data", status: 200, body: '{"data":{"fields":{"total_count":3}}}', expected: "200 data" },
  { name: "a coded error", status: 200, body: '{"errors":[{"message":"x","extensions":{"code":"COST_LIMIT_EXCEEDED"}}]}', expected: "200 COST_LIMIT_EXCEEDED" },
  { name: "an error without a code", status: 400, body: '{"errors":[{"message":"x"}]}', expected: "400 error without code" },
  { name: "a body that is not JSON", status: 503, body: "<html>", expected: "503 not JSON" },
  { name: "an empty errors list", status: 200, body: '{"data":null,"errors":[]}', expected: "200 data" },
];

for (const row of outcomes) {
  test(`graphqlOutcome names ${row.name}`, () => {
    assert.equal(graphqlOutcome(row.status, row.body), row.expected);
  });
}

test("formatPhase shows each probe's verdict, the attacker's tally and the recovery", () => {
  const report: PhaseReport = {
    phase: "signin",
    title: "attack 2",
    probes: {
      "GET /signin": summarizeProbe([...ms(40, 50), { ms: 60, ok: false, outcome: "503" }], 2),
      "GET /healthz": summarizeProbe(ms(1, 1, 2), 1),
    },
    attacker: { "429": 180, "400": 20 },
    addressesSeen: ["127.0.0.2", "127.0.0.3"],
    settleMs: 1_250,
    settled: true,
    meets: false,
  };
  const text = formatPhase(report);
  assert.match(text, /GET \/signin .* MISSED/);
  assert.match(text, /GET \/healthz .* met/);
  assert.match(text, /GET \/signin failed with: 503 x1/);
  assert.match(text, /attacker got: 429 x180, 400 x20/);
  assert.match(text, /127\.0\.0\.2, 127\.0\.0\.3/);
  assert.match(text, /recovered after 1\.3 s/);
});

const innocentRows = [
  { name: "9 of 10 for each browser", returning: [9, 10], newBrowser: [9, 10], meets: true },
  { name: "8 of 10 for the new browser", returning: [10, 10], newBrowser: [8, 10], meets: false },
  { name: "no tries at all", returning: [0, 0], newBrowser: [10, 10], meets: false },
] as const;

for (const row of innocentRows) {
  test(`innocentMeets: ${row.name} ${row.meets ? "meets" : "misses"} the target`, () => {
    const kind = ([successes, tries]: readonly [number, number]) => ({ successes, tries, outcomes: {} });
    assert.equal(innocentMeets({ returning: kind(row.returning), newBrowser: kind(row.newBrowser) }), row.meets);
  });
}

test("formatPhase shows an attack's own verdict and what the server audited", () => {
  const report: PhaseReport = {
    phase: "queue",
    title: "attack 4",
    probes: { "GET /healthz": summarizeProbe(ms(1, 1, 2), 1) },
    attacker: { "429": 900, "503": 40 },
    audited: { "throttled sign_in_busy": 2 },
    verdict: { meets: true, lines: ["innocent sign-ins, returning browser: 10/10 (303 x10)"], figures: {} },
    meets: true,
  };
  const text = formatPhase(report);
  assert.match(text, /audited during the phase: throttled sign_in_busy x2/);
  assert.match(text, /returning browser: 10\/10/);
});
