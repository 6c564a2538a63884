import assert from "node:assert/strict";
import { storeTest } from "../../helpers/stores.ts";

storeTest("ensure creates an organization once and returns the same one after", async (store) => {
  const first = await store.organizations.ensure("acme", { name: "ACME Farms", now: 1 });
  const again = await store.organizations.ensure("acme", { name: "ignored", now: 2 });
  assert.equal(again.id, first.id);
  assert.equal(again.name, "ACME Farms");
  assert.deepEqual(await store.organizations.findBySlug("acme"), first);
  assert.deepEqual(await store.organizations.findById(first.id), { id: first.id, slug: "acme", name: "ACME Farms", createdAt: 1 });
  assert.equal(await store.organizations.findBySlug("nobody"), undefined);
  assert.equal(await store.organizations.findById(first.id + 1000), undefined);
});

storeTest("memberships scope a user to their organizations only", async (store) => {
  const acme = await store.organizations.ensure("acme", { now: 1 });
  const other = await store.organizations.ensure("other", { now: 1 });
  await store.organizations.ensure("third", { now: 1 });
  const user = await store.users.insert({ username: "u", kind: "person", now: 1 });
  await store.organizations.addMember(acme.id, user.id, { now: 1 });
  await store.organizations.addMember(other.id, user.id, { now: 1 });
  await store.organizations.addMember(other.id, user.id, { now: 2 });
  assert.deepEqual(await store.organizations.idsForUser(user.id), [acme.id, other.id]);
  assert.deepEqual((await store.organizations.listForUser(user.id)).map((o) => o.slug), ["acme", "other"]);
  assert.equal((await store.organizations.list()).length, 3);
});

storeTest("listByIds returns the organizations with those ids in id order and leaves out unknown ids", async (store) => {
  const acme = await store.organizations.ensure("acme", { now: 1 });
  await store.organizations.ensure("other", { now: 1 });
  const third = await store.organizations.ensure("third", { now: 1 });
  assert.deepEqual((await store.organizations.listByIds([third.id, 999, acme.id])).map((o) => o.slug), ["acme", "third"]);
  assert.deepEqual(await store.organizations.listByIds([]), []);
});

storeTest("join creates a missing organization, and reports a membership that already existed", async (store) => {
  const user = await store.users.insert({ username: "u", kind: "person", now: 1 });
  const first = await store.organizations.join(user.id, "north", 5);
  assert.deepEqual(first, { organization: { id: first.organization.id, slug: "north", name: "north", createdAt: 5 }, joined: true, created: true });
  const again = await store.organizations.join(user.id, "north", 6);
  assert.deepEqual(again, { organization: first.organization, joined: false, created: false });
  const other = await store.users.insert({ username: "v", kind: "person", now: 1 });
  assert.deepEqual(await store.organizations.join(other.id, "north", 7), { organization: first.organization, joined: true, created: false });
  assert.deepEqual(await store.organizations.idsForUser(other.id), [first.organization.id]);
});

storeTest("removeMember ends one membership and reports whether there was one", async (store) => {
  const acme = await store.organizations.ensure("acme", { now: 1 });
  const other = await store.organizations.ensure("other", { now: 1 });
  const user = await store.users.insert({ username: "u", kind: "person", now: 1 });
  await store.organizations.addMember(acme.id, user.id, { now: 1 });
  await store.organizations.addMember(other.id, user.id, { now: 1 });
  assert.equal(await store.organizations.removeMember(acme.id, user.id), true);
  assert.equal(await store.organizations.removeMember(acme.id, user.id), false);
  assert.deepEqual(await store.organizations.idsForUser(user.id), [other.id]);
});
