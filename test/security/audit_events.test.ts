import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildFileApp } from "./file_app.ts";
import { METRICS_TOKEN, fullFlow } from "./full_flow.ts";
import { openTestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { authCodeTokens, refreshBody } from "../helpers/codes.ts";

// The security events issue 7 lists, each with what the full flow must have recorded for it.
const expected: { event: string; check?: (detail: Record<string, unknown> | null) => boolean }[] = [
  { event: "token_issued", check: (d) => d?.grant_type === "client_credentials" },
  { event: "token_issued", check: (d) => d?.grant_type === "authorization_code" },
  { event: "token_refreshed" },
  { event: "token_revoked" },
  { event: "code_reuse_detected" },
  { event: "client_auth_failed" },
  { event: "sign_in_failed" },
  { event: "sign_in_succeeded" },
  { event: "consent_granted" },
];

test("after a full flow the audit table holds every security event, with the matching structured log line", async () => {
  const f = buildFileApp({ FIELDGATE_METRICS_TOKEN: METRICS_TOKEN });
  try {
    await fullFlow(f);
    const events = await f.store.audit.list({});
    for (const want of expected) {
      const found = events.find((e) => e.event === want.event && (want.check?.(e.detail) ?? true));
      assert.ok(found, `audit event ${want.event} missing; recorded: ${[...new Set(events.map((e) => e.event))].join(", ")}`);
      assert.ok(found.at > 0);
      assert.ok(f.log.some((l) => l.event === `audit.${want.event}`), `no audit.${want.event} log line`);
    }
    assert.equal(events.filter((e) => e.event === "token_issued").length, 3, "two client credentials and one code exchange");
  } finally {
    await f.cleanup();
  }
});

test("a refresh reuse is recorded as refresh_reuse_detected", async () => {
  const t = await openTestApp();
  const { client, tokens } = await authCodeTokens(t);
  assert.equal((await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)))).status, 200);
  assert.equal((await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)))).status, 400);
  const events = await t.store.audit.list({});
  assert.equal(events.filter((e) => e.event === "refresh_reuse_detected").length, 1);
  assert.ok(t.log.some((l) => l.event === "audit.refresh_reuse_detected"));
});
