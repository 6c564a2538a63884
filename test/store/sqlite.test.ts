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
