// The group commit's hold: queued writes wait, without blocking the event loop, while a checkpoint holds the lock.
import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { assertLoopKeepsTurning } from "../../helpers/event_loop.ts";
import { DatabaseSync } from "node:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BusyWait, type Connection, createGroupCommit } from "../../../src/store/sqlite/group_commit.ts";
import { openDatabase } from "../../../src/store/sqlite/database.ts";
import { StoreBusyError } from "../../../src/store/errors.ts";

/** A raw connection as the group commit sees it; BEGIN IMMEDIATE always gets the lock (nothing else writes). */
function connection(db: DatabaseSync): Connection {
  return {
    exec: (sql) => db.exec(sql),
    get isTransaction() {
      return db.isTransaction;
    },
    beginImmediate: () => (db.exec("BEGIN IMMEDIATE"), true),
  };
}

function setUp() {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (v TEXT NOT NULL)");
  const commit = createGroupCommit(connection(db), (fn) => fn(), (fn) => void setImmediate(fn));
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

test("a write alone in its commit that fails leaves none of its rows, and the next write commits", async () => {
  const { db, commit, insert, rows } = setUp();
  await assert.rejects(commit.run(() => {
    db.prepare("INSERT INTO t (v) VALUES ('half')").run();
    throw new Error("refused after a first write");
  }), /refused after a first write/);
  assert.equal(db.isTransaction, false, "the failed write's transaction is closed");
  assert.deepEqual(rows(), []);
  await insert("next");
  assert.deepEqual(rows(), ["next"]);
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

test("a hold's limit runs on the injected timer: firing it releases the writes, and a hold that ends cancels it", async () => {
  const b = busySetUp(0);
  const never = new Promise<void>(() => {});
  void b.commit.holdWhile(() => never, 250);
  const write = b.insert("a");
  await turns(3);
  assert.deepEqual(b.rows(), [], "held");
  assert.deepEqual(b.timers.map((t) => t.ms), [250]);
  b.fireTimer();
  await write;
  assert.deepEqual(b.rows(), ["a"]);
  const done = deferred<void>();
  const held = b.commit.holdWhile(() => done.promise, 250);
  assert.equal(b.timers.length, 1);
  done.resolve();
  await held;
  assert.equal(b.timers.length, 0, "the ended hold's timer was cancelled");
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

/** A connection whose write lock someone else holds while `state.locked` (or for the first `busyTimes` attempts). */
function busySetUp(busyTimes: number, limitMs = 5_000) {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (v TEXT NOT NULL)");
  const state = { locked: false, attempts: 0 };
  const raw = connection(db);
  const conn: Connection = {
    exec: raw.exec,
    get isTransaction() {
      return db.isTransaction;
    },
    beginImmediate: () => (++state.attempts <= busyTimes || state.locked ? false : raw.beginImmediate()),
  };
  const clock = { now: 0 };
  const timers: { fn: () => void; ms: number }[] = [];
  const busy: BusyWait = {
    limitMs,
    later: (fn, ms) => {
      const timer = { fn, ms };
      timers.push(timer);
      return () => {
        const index = timers.indexOf(timer);
        if (index >= 0) timers.splice(index, 1);
      };
    },
    now: () => clock.now,
  };
  const commit = createGroupCommit(conn, (fn) => fn(), (fn) => void setImmediate(fn), busy);
  const insert = (v: string) => commit.run(() => db.prepare("INSERT INTO t (v) VALUES (?)").run(v));
  const rows = () => (db.prepare("SELECT v FROM t ORDER BY rowid").all() as { v: string }[]).map((r) => r.v);
  /** Lets the next retry timer fire after its delay. */
  const fireTimer = () => {
    const timer = timers.shift();
    assert.ok(timer, "a retry was scheduled");
    clock.now += timer.ms;
    timer.fn();
  };
  return { commit, insert, rows, timers, fireTimer, state, clock };
}

test("a commit that finds the write lock taken retries from a timer, backing off, and then commits everything", async () => {
  const b = busySetUp(3);
  const writes = Promise.all([b.insert("a"), b.insert("b")]);
  await turns(2);
  assert.deepEqual(b.timers.map((t) => t.ms), [1]);
  const late = b.insert("c"); // queued while waiting: joins the batch, schedules no flush of its own
  b.fireTimer();
  assert.deepEqual(b.timers.map((t) => t.ms), [2]);
  b.fireTimer();
  assert.deepEqual(b.timers.map((t) => t.ms), [4]);
  assert.deepEqual(b.rows(), []);
  b.fireTimer();
  await Promise.all([writes, late]);
  assert.deepEqual(b.rows(), ["a", "b", "c"]);
  assert.equal(b.state.attempts, 4);
  await turns(2);
  assert.equal(b.timers.length, 0, "no retry left behind");
});

test("each write gets the whole limit from its own first wait: those past it fail, a later one commits", async () => {
  const b = busySetUp(0, 100);
  b.state.locked = true;
  let settled = 0;
  const early = [b.insert("a"), b.insert("b")].map((p) => p.then(() => "ok", (error: unknown) => error).finally(() => settled++));
  await turns(2);
  // Retries at 1, 3, 7, 15, 31, 51, 71 ms (the backoff tops out at 20 ms).
  while (b.clock.now < 60) b.fireTimer();
  const late = b.insert("c").then(() => "ok", (error: unknown) => error);
  while (settled < 2) {
    b.fireTimer();
    await turns(1);
  }
  const outcomes = await Promise.all(early);
  assert.ok(outcomes.every((o) => o instanceof StoreBusyError), String(outcomes));
  assert.ok(b.clock.now >= 100 && b.clock.now < 140, `failed at ${b.clock.now} ms`);
  assert.equal(b.timers.length, 1, "the later write still waits");
  b.state.locked = false;
  b.fireTimer();
  assert.equal(await late, "ok", "the write that joined later had its own 100 ms");
  assert.deepEqual(b.rows(), ["c"]);
});

test("time spent behind a checkpoint hold counts toward the busy limit: hold and busy wait stay within it", async () => {
  const b = busySetUp(0, 100);
  b.state.locked = true;
  const checkpoint = deferred<void>();
  const held = b.commit.holdWhile(() => checkpoint.promise, 10_000);
  let outcome: unknown;
  const write = b.insert("a").then(() => "ok", (error: unknown) => error).then((o) => (outcome = o));
  b.clock.now = 80;
  checkpoint.resolve();
  await held;
  await turns(2);
  while (outcome === undefined) {
    b.fireTimer();
    await turns(1);
  }
  await write;
  assert.ok(outcome instanceof StoreBusyError, String(outcome));
  assert.ok(b.clock.now >= 100 && b.clock.now < 130, `failed at ${b.clock.now} ms, not 100 ms after it was queued`);
});

test("while another connection holds the write lock, a queued write waits without stopping the event loop", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-busy-"));
  const path = join(dir, "busy.db");
  const ours = openDatabase(path);
  const other = new DatabaseSync(path);
  try {
    ours.exec("CREATE TABLE t (v TEXT NOT NULL)");
    other.exec("BEGIN IMMEDIATE");
    let committed = false;
    const write = ours.transactionBatched(() => ours.prepare("INSERT INTO t (v) VALUES ('x')").run()).then(() => (committed = true));
    // The loop keeps turning: a timer set now fires long before SQLite's 5 s busy timeout would have passed.
    await assertLoopKeepsTurning();
    assert.equal(committed, false);
    other.exec("COMMIT");
    await write;
    assert.equal((ours.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n, 1);
  } finally {
    other.close();
    ours.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
