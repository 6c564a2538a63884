import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp } from "../helpers/test_app.ts";

const session = (userId: number, now: number, hash = "a".repeat(64)) => ({ sessionHash: hash, userId, createdAt: now, expiresAt: now + 100 });

test("sessions: an inserted session is found until it expires", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  await t.store.sessions.insert(session(user.id, now));
  assert.equal((await t.store.sessions.findActive("a".repeat(64), now))?.userId, user.id);
  assert.equal(await t.store.sessions.findActive("a".repeat(64), now + 100), undefined);
});

test("sessions: a disabled user's session is not active", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  await t.store.sessions.insert(session(user.id, now));
  await t.store.users.setDisabled(user.id, true);
  assert.equal(await t.store.sessions.findActive("a".repeat(64), now), undefined);
});

test("sessions: replace deletes the old session and inserts the new one together", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  await t.store.sessions.insert(session(user.id, now, "old".padEnd(64, "0")));
  const started = await t.store.sessions.replace("old".padEnd(64, "0"), session(user.id, now, "new".padEnd(64, "0")), { passwordHash: user.passwordHash!, maxSessions: 10 });
  assert.equal(started, true);
  assert.equal(await t.store.sessions.findActive("old".padEnd(64, "0"), now), undefined);
  assert.ok(await t.store.sessions.findActive("new".padEnd(64, "0"), now));
});

test("sessions: replace starts nothing once the verified password was replaced or the user disabled", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  const verified = user.passwordHash!;
  await t.store.sessions.insert(session(user.id, now, "old".padEnd(64, "0")));
  await t.store.users.replacePassword(user.id, "pbkdf2-sha256$1000$newsalt$newhash");
  assert.equal(await t.store.sessions.replace(undefined, session(user.id, now, "new".padEnd(64, "0")), { passwordHash: verified, maxSessions: 10 }), false);
  assert.equal(await t.store.sessions.findActive("new".padEnd(64, "0"), now), undefined);
  const other = await t.seed.user();
  await t.store.users.setDisabled(other.id, true);
  assert.equal(await t.store.sessions.replace(undefined, session(other.id, now, "dis".padEnd(64, "0")), { passwordHash: other.passwordHash!, maxSessions: 10 }), false);
});

test("sessions: replace with a hash that collides with an existing one rolls back entirely", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  await t.store.sessions.insert(session(user.id, now, "old".padEnd(64, "0")));
  await t.store.sessions.insert(session(user.id, now, "dup".padEnd(64, "0")));
  await assert.rejects(t.store.sessions.replace("old".padEnd(64, "0"), session(user.id, now, "dup".padEnd(64, "0")), { passwordHash: user.passwordHash!, maxSessions: 10 }));
  assert.ok(await t.store.sessions.findActive("old".padEnd(64, "0"), now), "the old session survives the failed rotation");
});

test("sessions: replace ends the user's oldest live sessions beyond maxSessions, and nobody else's", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const other = await t.seed.user();
  const now = t.clock.nowSeconds();
  const hash = (name: string) => name.padEnd(64, "0");
  await t.store.sessions.insert(session(other.id, now, hash("other")));
  await t.store.sessions.insert(session(user.id, now, hash("first")));
  await t.store.sessions.insert(session(user.id, now, hash("second")));
  const started = await t.store.sessions.replace(undefined, session(user.id, now, hash("third")), { passwordHash: user.passwordHash!, maxSessions: 2 });
  assert.equal(started, true);
  assert.equal(await t.store.sessions.findActive(hash("first"), now), undefined, "the oldest ended");
  assert.ok(await t.store.sessions.findActive(hash("second"), now));
  assert.ok(await t.store.sessions.findActive(hash("third"), now));
  assert.ok(await t.store.sessions.findActive(hash("other"), now), "another user's session is untouched");
});

test("sessions: delete ends a session and expired sessions are purged", async () => {
  const t = buildTestApp();
  const user = await t.seed.user();
  const now = t.clock.nowSeconds();
  await t.store.sessions.insert(session(user.id, now, "x".repeat(64)));
  await t.store.sessions.delete("x".repeat(64));
  assert.equal(await t.store.sessions.findActive("x".repeat(64), now), undefined);
  await t.store.sessions.insert(session(user.id, now, "y".repeat(64)));
  assert.equal((await t.store.purge(now + 1000, { retentionSeconds: 0, auditRetentionSeconds: 0 })).sessions, 1);
});
