// openDatabase: pragmas for a file database and the background (worker-thread) WAL checkpoint.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite.ts";

function tempDb() {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-sqlite-"));
  const path = join(dir, "test.db");
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test("a file database opens in WAL mode with synchronous NORMAL and automatic checkpoints as asked", () => {
  const { path, cleanup } = tempDb();
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  try {
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    assert.equal(db.prepare("PRAGMA synchronous").get()?.synchronous, 1);
    assert.equal(db.prepare("PRAGMA wal_autocheckpoint").get()?.wal_autocheckpoint, 0);
  } finally {
    db.close();
    cleanup();
  }
});

test("checkpointInBackground moves committed pages into the database file before it resolves", async () => {
  const { path, cleanup } = tempDb();
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  try {
    db.transaction(() => {
      const insert = db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, ?)");
      for (let i = 0; i < 500; i++) insert.run(`org-${i}`, "x".repeat(200), i);
    });
    assert.ok(statSync(`${path}-wal`).size > 0);
    await db.checkpointInBackground("TRUNCATE");
    assert.equal(statSync(`${path}-wal`).size, 0);
    // The rows are still there and the connection keeps working after the worker's checkpoint.
    assert.equal(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()?.n, 500);
    db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('after', 'after', 1)").run();
    await db.checkpointInBackground("PASSIVE");
    assert.equal(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()?.n, 501);
  } finally {
    db.close();
    cleanup();
  }
});

test("checkpointInBackground on an in-memory database resolves without a worker", async () => {
  const db = openDatabase(":memory:");
  try {
    await db.checkpointInBackground("PASSIVE");
    assert.equal(db.prepare("SELECT 1 AS ok").get()?.ok, 1);
  } finally {
    db.close();
  }
});

test("transactionBatched commits one turn's calls together, each under its own savepoint", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-batch-"));
  const db = openDatabase(join(dir, "db.sqlite"));
  try {
    db.exec("CREATE TABLE t (v TEXT UNIQUE)");
    const insert = (v: string) => () => {
      db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
      return v;
    };
    const count = () => Number((db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n);
    const results = await Promise.allSettled([
      db.transactionBatched(insert("a")),
      // Two writes, the second fails: only this call's first write is rolled back with it.
      db.transactionBatched(() => {
        insert("b")();
        return insert("a")();
      }),
      // A nested transaction() joins the shared one instead of failing on BEGIN.
      db.transactionBatched(() => db.transaction(insert("c"))),
    ]);
    assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.deepEqual((db.prepare("SELECT v FROM t ORDER BY v").all() as { v: string }[]).map((r) => r.v), ["a", "c"]);
    // Settled promises mean committed: another connection sees the rows.
    const other = openDatabase(join(dir, "db.sqlite"));
    assert.equal(Number((other.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n), 2);
    other.close();
    const pending = db.transactionBatched(insert("d"));
    assert.equal(count(), 2);
    await pending;
    assert.equal(count(), 3);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("closing the database commits the writes still queued for a batch", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-batch-"));
  try {
    const db = openDatabase(join(dir, "db.sqlite"));
    db.exec("CREATE TABLE t (v TEXT)");
    const pending = db.transactionBatched(() => db.prepare("INSERT INTO t (v) VALUES ('x')").run());
    db.close();
    await pending;
    const again = openDatabase(join(dir, "db.sqlite"));
    assert.equal(Number((again.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n), 1);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
