import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp } from "../helpers/test_app.ts";

test("consents: grant records the scope and find returns it with the client's names", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const { client } = await t.seed.client({ name: "Field notes app" });
  await t.store.consents.grant(user.id, client.id, { scope: "fields:read", now: 10 });
  assert.deepEqual(await t.store.consents.find(user.id, client.id), {
    clientId: client.id,
    clientPublicId: client.clientId,
    clientName: "Field notes app",
    scope: "fields:read",
    grantedAt: 10,
  });
});

test("consents: granting again replaces scope and time instead of adding a row", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const { client } = await t.seed.client();
  await t.store.consents.grant(user.id, client.id, { scope: "a", now: 1 });
  await t.store.consents.grant(user.id, client.id, { scope: "fields:read", now: 2 });
  const all = await t.store.consents.listForUser(user.id);
  assert.equal(all.length, 1);
  assert.equal(all[0]!.scope, "fields:read");
  assert.equal(all[0]!.grantedAt, 2);
});

test("consents: listForUser returns only that user's consents, by client name", async () => {
  const t = buildTestApp();
  const alice = await t.seed.user();
  const bob = await t.seed.user();
  const zed = (await t.seed.client({ name: "Zed" })).client;
  const abc = (await t.seed.client({ name: "Abc" })).client;
  await t.store.consents.grant(alice.id, zed.id, { scope: "fields:read", now: 1 });
  await t.store.consents.grant(alice.id, abc.id, { scope: "fields:read", now: 1 });
  await t.store.consents.grant(bob.id, zed.id, { scope: "fields:read", now: 1 });
  assert.deepEqual((await t.store.consents.listForUser(alice.id)).map((c) => c.clientName), ["Abc", "Zed"]);
  assert.deepEqual((await t.store.consents.listForUser(bob.id)).map((c) => c.clientName), ["Zed"]);
});

test("consents: revoking the user's access to a client deletes its consent", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const { client } = await t.seed.client();
  await t.store.consents.grant(user.id, client.id, { scope: "fields:read", now: 1 });
  await t.store.tokens.revokeUserClient(user.id, client.id, 2);
  assert.equal(await t.store.consents.find(user.id, client.id), undefined);
});
