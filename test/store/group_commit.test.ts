// The group commit's hold: queued writes wait, without blocking the event loop, while a checkpoint holds the lock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createGroupCommit } from "../../src/store/group_commit.ts";

function setUp() {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (v TEXT NOT NULL)");
  const commit = createGroupCommit(db, (fn) => fn(), (fn) => void setImmediate(fn));
  const insert = (v: string) => commit.run(() => db.prepare("INSERT INTO t (v) VALUES (?)").run(v));
  const rows = () => (db.prepare("SELECT v FROM t ORDER BY rowid").all() as { v: string }[]).map((r) => r.v);
  return { db, commit, insert, rows };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test("writes queued in one turn commit together at the end of it", async () => {
  const { insert, rows } = setUp();
  const done = Promise.all([insert("a"), insert("b")]);
  assert.deepEqual(rows(), []);
  await done;
  assert.deepEqual(rows(), ["a", "b"]);
});

test("during a hold queued writes wait for its end, however many turns pass, then commit in order", async () => {
  const { commit, insert, rows } = setUp();
  const checkpoint = deferred<string>();
  const held = commit.holdWhile(() => checkpoint.promise, 10_000);
  let settled = false;
  const writes = Promise.all([insert("a"), insert("b")]).then(() => (settled = true));
  await turns(5);
  assert.deepEqual(rows(), [], "nothing committed while held");
  assert.equal(settled, false);
  checkpoint.resolve("done");
  assert.equal(await held, "done");
  await writes;
  assert.deepEqual(rows(), ["a", "b"]);
});

test("a write queued before the hold, in the same turn, waits too", async () => {
  const { commit, insert, rows } = setUp();
  const checkpoint = deferred<void>();
  const write = insert("early");
  const held = commit.holdWhile(() => checkpoint.promise, 10_000);
  await turns(3);
  assert.deepEqual(rows(), []);
  checkpoint.resolve();
  await held;
  await write;
  assert.deepEqual(rows(), ["early"]);
});

test("a failing hold still releases the writes, and reports its own error", async () => {
  const { commit, insert, rows } = setUp();
  const checkpoint = deferred<void>();
  const held = commit.holdWhile(() => checkpoint.promise, 10_000);
  const write = insert("a");
  checkpoint.reject(new Error("worker exited"));
  await assert.rejects(held, /worker exited/);
  await write;
  assert.deepEqual(rows(), ["a"]);
});

test("a hold that never ends releases the writes after its limit", async () => {
  const { commit, insert, rows } = setUp();
  const never = new Promise<void>(() => {});
  void commit.holdWhile(() => never, 20);
  await insert("a");
  assert.deepEqual(rows(), ["a"]);
});

test("nested holds release the writes only when the last one ends", async () => {
  const { commit, insert, rows } = setUp();
  const first = deferred<void>();
  const second = deferred<void>();
  const a = commit.holdWhile(() => first.promise, 10_000);
  const b = commit.holdWhile(() => second.promise, 10_000);
  const write = insert("a");
  first.resolve();
  await a;
  await turns(3);
  assert.deepEqual(rows(), [], "still held by the second");
  second.resolve();
  await b;
  await write;
  assert.deepEqual(rows(), ["a"]);
});

test("drain commits what is queued even during a hold (closing the database)", async () => {
  const { commit, insert, rows } = setUp();
  const checkpoint = deferred<void>();
  void commit.holdWhile(() => checkpoint.promise, 10_000);
  const write = insert("a");
  commit.drain();
  await write;
  assert.deepEqual(rows(), ["a"]);
  checkpoint.resolve();
});
