import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openStore } from "../../src/store/store.ts";
import { StoreConflictError } from "../../src/store/errors.ts";
import { buildTestApp } from "../helpers/test_app.ts";
import { postJson } from "../helpers/requests.ts";
import { authCodeTokens, codeBody, issueCode, refreshBody } from "../helpers/codes.ts";
import { gql } from "../helpers/graphql.ts";

test("users insert, find by id and by case-insensitive username", async () => {
  const store = openStore(":memory:");
  const alice = await store.users.insert({ username: "Alice@example.com", kind: "person", passwordHash: "h", now: 5 });
  assert.equal((await store.users.findById(alice.id))?.username, "Alice@example.com");
  assert.equal((await store.users.findByUsername("alice@EXAMPLE.com"))?.id, alice.id);
  assert.equal(await store.users.findByUsername("bob@example.com"), undefined);
});

test("a taken username is a StoreConflictError, whatever its case", async () => {
  const store = openStore(":memory:");
  await store.users.insert({ username: "a@example.com", kind: "person", now: 1 });
  await assert.rejects(store.users.insert({ username: "A@example.com", kind: "person", now: 1 }), StoreConflictError);
});

test("an integration user can never hold a password hash", async () => {
  const store = openStore(":memory:");
  await assert.rejects(store.users.insert({ username: "robot", kind: "integration", passwordHash: "h", now: 1 }), /CHECK constraint/);
  const robot = await store.users.insert({ username: "robot", kind: "integration", now: 1 });
  assert.equal(await store.users.updatePasswordHash(robot.id, "h", { replacing: "" }), false);
  await store.users.replacePassword(robot.id, "h");
  assert.equal((await store.users.findById(robot.id))?.passwordHash, null);
});

test("updatePasswordHash replaces only the hash it was told it replaces", async () => {
  const store = openStore(":memory:");
  const ann = await store.users.insert({ username: "ann", kind: "person", passwordHash: "h1", now: 1 });
  assert.equal(await store.users.updatePasswordHash(ann.id, "h2", { replacing: "h0" }), false);
  assert.equal((await store.users.findById(ann.id))?.passwordHash, "h1");
  assert.equal(await store.users.updatePasswordHash(ann.id, "h2", { replacing: "h1" }), true);
  assert.equal((await store.users.findById(ann.id))?.passwordHash, "h2");
});

test("users can be disabled and listed in id order", async () => {
  const store = openStore(":memory:");
  const a = await store.users.insert({ username: "a", kind: "person", now: 1 });
  await store.users.insert({ username: "b", kind: "integration", now: 1 });
  await store.users.setDisabled(a.id, true);
  const list = await store.users.list();
  assert.deepEqual(list.map((u) => [u.username, u.kind, u.disabled]), [["a", "person", true], ["b", "integration", false]]);
});

test("insertMember creates the organization and the membership with the user", async () => {
  const store = openStore(":memory:");
  const user = await store.users.insertMember({ username: "ann", kind: "person", passwordHash: "h", now: 1 }, "acme");
  const orgs = await store.organizations.listForUser(user.id);
  assert.deepEqual(orgs.map((o) => o.slug), ["acme"]);
  const again = await store.users.insertMember({ username: "bob", kind: "integration", now: 2 }, "acme");
  assert.deepEqual((await store.organizations.listForUser(again.id)).map((o) => o.id), orgs.map((o) => o.id));
  assert.equal((await store.organizations.list()).length, 1);
});

test("insertMember with a taken username leaves nothing behind: no organization, no membership", async () => {
  const store = openStore(":memory:");
  await store.users.insertMember({ username: "ann", kind: "person", passwordHash: "h", now: 1 }, "acme");
  await assert.rejects(
    store.users.insertMember({ username: "ANN", kind: "person", passwordHash: "h", now: 2 }, "race-org"),
    StoreConflictError,
  );
  assert.deepEqual((await store.organizations.list()).map((o) => o.slug), ["acme"]);
});

test("erase ends a real grant: the access token is refused, the refresh token and an unused code are dead", async () => {
  const t = buildTestApp();
  const { client, issued, tokens } = await authCodeTokens(t);
  const pending = await issueCode(t, client, { userId: issued.userId });
  assert.equal((await gql(t, tokens.access_token, "{ fields { total_count } }")).status, 200);
  const outcome = await t.store.users.erase(issued.userId, t.clock.nowSeconds());
  assert.equal(outcome.status, "erased");
  assert.equal((await gql(t, tokens.access_token, "{ fields { total_count } }")).status, 401);
  const refreshed = await t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)));
  assert.equal((await refreshed.json()).error, "invalid_grant");
  const exchanged = await t.app.fetch(postJson("/oauth/token", codeBody(client, pending)));
  assert.equal((await exchanged.json()).error, "invalid_grant");
  assert.equal(await t.store.users.findByUsername(`(deleted user ${issued.userId})`), undefined, "a tombstone is nobody's sign-in name");
  assert.deepEqual(await t.store.users.erase(issued.userId, t.clock.nowSeconds()), { status: "missing" });
});
