import assert from "node:assert/strict";
import { storeTest } from "../../helpers/stores.ts";
import { seedPerson } from "../../helpers/store_seed.ts";

const NOW = 1_000;
const hash = (name: string) => name.padEnd(64, "0");
const session = (userId: number, name: string, now = NOW) => ({ sessionHash: hash(name), userId, createdAt: now, expiresAt: now + 100 });
const verified = (user: { passwordHash: string | null }, maxSessions = 10) => ({ passwordHash: user.passwordHash!, maxSessions });

storeTest("sessions: an inserted session is found until it expires", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "a"));
  const found = await store.sessions.findActive(hash("a"), NOW + 99);
  assert.deepEqual(found && { ...found, id: 0 }, { id: 0, userId: user.id, createdAt: NOW, expiresAt: NOW + 100 });
  assert.equal(await store.sessions.findActive(hash("a"), NOW + 100), undefined);
  assert.equal(await store.sessions.findActive(hash("b"), NOW), undefined);
});

storeTest("sessions: a disabled user's session is not active", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "a"));
  await store.users.setDisabled(user.id, true);
  assert.equal(await store.sessions.findActive(hash("a"), NOW), undefined);
});

storeTest("sessions: replace deletes the old session and inserts the new one together", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "old"));
  assert.equal(await store.sessions.replace(hash("old"), session(user.id, "new"), verified(user)), true);
  assert.equal(await store.sessions.findActive(hash("old"), NOW), undefined);
  assert.ok(await store.sessions.findActive(hash("new"), NOW));
});

storeTest("sessions: replace starts nothing once the verified password was replaced or the user disabled", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "old"));
  await store.users.replacePassword(user.id, "pbkdf2-sha256$1000$newsalt$newhash");
  assert.equal(await store.sessions.replace(undefined, session(user.id, "new"), verified(user)), false);
  assert.equal(await store.sessions.findActive(hash("new"), NOW), undefined);
  const other = await seedPerson(store, NOW);
  await store.sessions.insert(session(other.id, "kept"));
  await store.users.setDisabled(other.id, true);
  assert.equal(await store.sessions.replace(hash("kept"), session(other.id, "dis"), verified(other)), false);
  await store.users.setDisabled(other.id, false);
  assert.equal(await store.sessions.findActive(hash("dis"), NOW), undefined);
  assert.equal(await store.sessions.findActive(hash("kept"), NOW), undefined, "disabling ended it, and the refused replace added nothing");
});

storeTest("sessions: replace with a hash that collides with an existing one rolls back entirely", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "old"));
  await store.sessions.insert(session(user.id, "dup"));
  await assert.rejects(store.sessions.replace(hash("old"), session(user.id, "dup"), verified(user)));
  assert.ok(await store.sessions.findActive(hash("old"), NOW), "the old session survives the failed rotation");
});

storeTest("sessions: replace ends the user's oldest live sessions beyond maxSessions, and nobody else's", async (store) => {
  const user = await seedPerson(store, NOW);
  const other = await seedPerson(store, NOW);
  await store.sessions.insert(session(other.id, "other"));
  await store.sessions.insert(session(user.id, "first"));
  await store.sessions.insert(session(user.id, "second"));
  assert.equal(await store.sessions.replace(undefined, session(user.id, "third"), verified(user, 2)), true);
  assert.equal(await store.sessions.findActive(hash("first"), NOW), undefined, "the oldest ended");
  assert.ok(await store.sessions.findActive(hash("second"), NOW));
  assert.ok(await store.sessions.findActive(hash("third"), NOW));
  assert.ok(await store.sessions.findActive(hash("other"), NOW), "another user's session is untouched");
});

storeTest("sessions: countOthers counts the user's other live sessions, endOthers ends them all", async (store) => {
  const user = await seedPerson(store, NOW);
  const other = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "mine"));
  await store.sessions.insert(session(user.id, "tablet"));
  await store.sessions.insert(session(user.id, "expired", NOW - 500));
  await store.sessions.insert(session(other.id, "theirs"));
  assert.equal(await store.sessions.countOthers(user.id, hash("mine"), NOW), 1);
  assert.equal(await store.sessions.endOthers(user.id, hash("mine")), 2, "expired ones included");
  assert.equal(await store.sessions.countOthers(user.id, hash("mine"), NOW), 0);
  assert.ok(await store.sessions.findActive(hash("mine"), NOW));
  assert.ok(await store.sessions.findActive(hash("theirs"), NOW));
});

storeTest("sessions: delete ends a session and expired sessions are purged", async (store) => {
  const user = await seedPerson(store, NOW);
  await store.sessions.insert(session(user.id, "x"));
  await store.sessions.delete(hash("x"));
  assert.equal(await store.sessions.findActive(hash("x"), NOW), undefined);
  await store.sessions.insert(session(user.id, "y"));
  assert.equal((await store.purge(NOW + 1000, { retentionSeconds: 0, auditRetentionSeconds: 0 })).sessions, 1);
});
