import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../src/store/store.ts";

test("audit events round-trip with their detail and are listed oldest first from `since`", async () => {
  const store = openStore(":memory:");
  await store.audit.insert({ at: 10, event: "token_issued", clientId: "c", userId: 1, ip: "192.0.2.1", detail: { grant_type: "client_credentials" } });
  await store.audit.insert({ at: 20, event: "sign_in_failed", clientId: null, userId: null, ip: "192.0.2.2", detail: null });
  await store.audit.insert({ at: 30, event: "consent_granted", clientId: "c", userId: 1, ip: null, detail: { scope: "fields:read" } });
  const all = await store.audit.list({});
  assert.deepEqual(all.map((e) => e.event), ["token_issued", "sign_in_failed", "consent_granted"]);
  assert.deepEqual(all[0]!.detail, { grant_type: "client_credentials" });
  assert.equal(all[1]!.detail, null);
  assert.deepEqual((await store.audit.list({ since: 20 })).map((e) => e.at), [20, 30]);
  assert.equal((await store.audit.list({ limit: 1 })).length, 1);
});
