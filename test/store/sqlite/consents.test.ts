import assert from "node:assert/strict";
import { storeTest } from "../../helpers/stores.ts";
import { seedClient, seedPerson } from "../../helpers/store_seed.ts";

storeTest("consents: grant records the scope and find returns it with the client's names", async (store) => {
  const user = await seedPerson(store, 1);
  const client = await seedClient(store, 1, { name: "Field notes app" });
  await store.consents.grant(user.id, client.id, { scope: "fields:read", now: 10 });
  assert.deepEqual(await store.consents.find(user.id, client.id), {
    clientId: client.id,
    clientPublicId: client.clientId,
    clientName: "Field notes app",
    scope: "fields:read",
    grantedAt: 10,
  });
  assert.equal(await store.consents.find(user.id, client.id + 1000), undefined);
});

storeTest("consents: granting again replaces scope and time instead of adding a row", async (store) => {
  const user = await seedPerson(store, 1);
  const client = await seedClient(store, 1);
  await store.consents.grant(user.id, client.id, { scope: "a", now: 1 });
  await store.consents.grant(user.id, client.id, { scope: "fields:read", now: 2 });
  const all = await store.consents.listForUser(user.id);
  assert.equal(all.length, 1);
  assert.equal(all[0]!.scope, "fields:read");
  assert.equal(all[0]!.grantedAt, 2);
});

storeTest("consents: listForUser returns only that user's consents, by client name in byte order", async (store) => {
  const alice = await seedPerson(store, 1);
  const bob = await seedPerson(store, 1);
  const zed = await seedClient(store, 1, { name: "Zed" });
  const abc = await seedClient(store, 1, { name: "abc" });
  const big = await seedClient(store, 1, { name: "Big" });
  for (const client of [zed, abc, big]) await store.consents.grant(alice.id, client.id, { scope: "fields:read", now: 1 });
  await store.consents.grant(bob.id, zed.id, { scope: "fields:read", now: 1 });
  assert.deepEqual((await store.consents.listForUser(alice.id)).map((c) => c.clientName), ["Big", "Zed", "abc"]);
  assert.deepEqual((await store.consents.listForUser(bob.id)).map((c) => c.clientName), ["Zed"]);
});

storeTest("consents: revoking the user's access to a client deletes its consent", async (store) => {
  const user = await seedPerson(store, 1);
  const client = await seedClient(store, 1);
  await store.consents.grant(user.id, client.id, { scope: "fields:read", now: 1 });
  await store.tokens.revokeUserClient(user.id, client.id, 2);
  assert.equal(await store.consents.find(user.id, client.id), undefined);
});
