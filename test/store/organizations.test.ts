import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../src/store/store.ts";

test("ensure creates an organization once and returns the same one after", async () => {
  const store = openStore(":memory:");
  const first = await store.organizations.ensure("acme", { name: "ACME Farms", now: 1 });
  const again = await store.organizations.ensure("acme", { name: "ignored", now: 2 });
  assert.equal(again.id, first.id);
  assert.equal(again.name, "ACME Farms");
  assert.equal((await store.organizations.findBySlug("acme"))?.id, first.id);
  assert.equal((await store.organizations.findById(first.id))?.slug, "acme");
});

test("memberships scope a user to their organizations only", async () => {
  const store = openStore(":memory:");
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

test("listByIds returns the organizations with those ids in id order and leaves out unknown ids", async () => {
  const store = openStore(":memory:");
  const acme = await store.organizations.ensure("acme", { now: 1 });
  await store.organizations.ensure("other", { now: 1 });
  const third = await store.organizations.ensure("third", { now: 1 });
  assert.deepEqual((await store.organizations.listByIds([third.id, 999, acme.id])).map((o) => o.slug), ["acme", "third"]);
  assert.deepEqual(await store.organizations.listByIds([]), []);
});
