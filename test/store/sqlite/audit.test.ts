import assert from "node:assert/strict";
import { storeTest } from "../../helpers/stores.ts";

storeTest("audit events round-trip with their detail and are listed oldest first from `since`", async (store) => {
  await store.audit.insert({ at: 10, event: "token_issued", clientId: "c", userId: 1, ip: "192.0.2.1", detail: { grant_type: "client_credentials" } });
  await store.audit.insert({ at: 20, event: "sign_in_failed", clientId: null, userId: null, ip: "192.0.2.2", detail: null });
  await store.audit.insert({ at: 30, event: "consent_granted", clientId: "c", userId: 1, ip: null, detail: { scope: "fields:read" } });
  const all = await store.audit.list({});
  assert.deepEqual(all.map((e) => e.event), ["token_issued", "sign_in_failed", "consent_granted"]);
  assert.deepEqual({ ...all[0]!, id: 0 }, {
    id: 0,
    at: 10,
    event: "token_issued",
    clientId: "c",
    userId: 1,
    ip: "192.0.2.1",
    detail: { grant_type: "client_credentials" },
  });
  assert.equal(all[1]!.detail, null);
  assert.deepEqual((await store.audit.list({ since: 20 })).map((e) => e.at), [20, 30]);
  assert.deepEqual((await store.audit.list({ since: 20, limit: 1 })).map((e) => e.at), [20], "from `since`: the first ones");
  assert.deepEqual((await store.audit.list({ limit: 2 })).map((e) => e.at), [20, 30], "without `since`: the latest ones");
});

storeTest("audit list keeps one user's or one client's events when asked", async (store) => {
  const event = (at: number, userId: number | null, clientId: string | null) =>
    store.audit.insert({ at, event: "e", clientId, userId, ip: null, detail: null });
  await event(1, 7, "a");
  await event(2, 8, "a");
  await event(3, 7, null);
  await event(4, null, "b");
  const ats = async (options: Parameters<typeof store.audit.list>[0]) => (await store.audit.list(options)).map((e) => e.at);
  assert.deepEqual(await ats({ userId: 7 }), [1, 3]);
  assert.deepEqual(await ats({ clientId: "a" }), [1, 2]);
  assert.deepEqual(await ats({ userId: 7, clientId: "a" }), [1]);
  assert.deepEqual(await ats({ userId: 7, since: 2 }), [3]);
  assert.deepEqual(await ats({ clientId: "b", limit: 5 }), [4]);
  assert.deepEqual(await ats({ userId: 9 }), []);
});
