// openDatabase: pragmas for a file database and the background (worker-thread) WAL checkpoint.
import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openDatabase } from "../../../src/store/sqlite/database.ts";
import { tempDb } from "../../helpers/temp_db.ts";

test("a file database opens in WAL mode with synchronous NORMAL and automatic checkpoints as asked", () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
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
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
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

/**
 * Commits one row per event-loop turn while up to `attempts` background checkpoints of `mode` run one after another
 * (a steady write load), stopping after the first that reports itself complete, as the server's next tick would;
 * then commits once more. Returns how many frames the WAL then holds, how many commits ran during checkpoints, and
 * how many during the last one.
 */
async function walAfterCheckpointsUnderLoad(mode: "PASSIVE" | "RESTART", attempts = 5) {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  try {
    const insert = db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, 0)");
    let n = 0;
    for (; n < 300; n++) insert.run(`org-${n}`, "x".repeat(500));
    let during = 0;
    let lastDuring = 0;
    for (let attempt = 0; attempt < attempts; attempt++) {
      let outcome: { complete: boolean } | undefined;
      const checkpoint = db.checkpointInBackground(mode).then((o) => (outcome = o));
      lastDuring = 0;
      while (!outcome) {
        insert.run(`org-${n++}`, "x".repeat(500));
        during++;
        lastDuring++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await checkpoint;
      if (outcome.complete) break;
    }
    insert.run(`org-${n++}`, "x".repeat(500));
    // What a PASSIVE checkpoint reports as "log" is the number of frames in the WAL right now.
    const frames = Number(db.prepare("PRAGMA wal_checkpoint(PASSIVE)").get()?.log);
    assert.equal(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()?.n, n);
    return { frames, during, lastDuring };
  } finally {
    db.close();
    cleanup();
  }
}

test("RESTART checkpoints taken while writes go on start the WAL over; PASSIVE ones cannot", async () => {
  const restart = await walAfterCheckpointsUnderLoad("RESTART");
  assert.ok(restart.during > 0, "writes ran during the checkpoint");
  // Only commits made after the restart (while the worker's answer was on its way, at most those of the last
  // checkpoint, and the one after) are left in the WAL, at a few frames each; without a restart it would still hold
  // the 300 commits made before the checkpoints began, at two or more frames each. Bounded by the commits that ran,
  // not by a fixed number, so a slow answer on a loaded machine cannot fail it.
  assert.ok(restart.frames <= 6 * (restart.lastDuring + 1), `frames after RESTART: ${restart.frames}, last: ${restart.lastDuring}`);
  assert.ok(restart.frames < 2 * (300 + restart.during), `frames after RESTART: ${restart.frames}`);
  // The control: where checkpoints run on a worker thread (Node; Deno runs them inline, so no write can overlap),
  // the same load with a passive checkpoint never lets the WAL start over, and it keeps everything written.
  if ("Deno" in globalThis) return;
  const passive = await walAfterCheckpointsUnderLoad("PASSIVE");
  assert.ok(passive.during > 1, "writes ran during the checkpoint");
  assert.ok(passive.frames > 300, `frames after PASSIVE: ${passive.frames}`);
});

test("a RESTART checkpoint gives up at once while another connection reads, instead of holding writers for it", async () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  const reader = new DatabaseSync(path);
  try {
    const insert = db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, 0)");
    insert.run("before", "x");
    // The reader's snapshot predates the next write, so the WAL cannot start over while it lasts.
    // The checkpoint worker is started (and warm) before the clock below runs, so its 2 s cover the checkpoint alone.
    await db.checkpointInBackground("PASSIVE");
    reader.exec("BEGIN");
    reader.prepare("SELECT COUNT(*) AS n FROM organizations").get();
    insert.run("after", "x");
    // Were the checkpoint to wait for the reader (the old 5 s busy timeout), it would still be waiting when the
    // reader ends, two seconds from now, and then report a complete restart.
    const release = setTimeout(() => reader.exec("COMMIT"), 2_000);
    const blocked = await db.checkpointInBackground("RESTART");
    clearTimeout(release);
    assert.equal(blocked.complete, false);
    if (reader.isTransaction) reader.exec("COMMIT");
    // Writers were never held: this write needs the lock the checkpoint would have kept.
    insert.run("meanwhile", "x");
    assert.equal((await db.checkpointInBackground("RESTART")).complete, true);
  } finally {
    reader.close();
    db.close();
    cleanup();
  }
});

test("checkpointInBackground after close rejects instead of starting a new worker", async () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  await db.checkpointInBackground("PASSIVE");
  db.close();
  try {
    await assert.rejects(db.checkpointInBackground("RESTART"), /after close/);
  } finally {
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

test("a transaction that fills the database reports the full disk, not the rollback SQLite already made", () => {
  const db = openDatabase(":memory:");
  // max_page_count makes SQLite answer SQLITE_FULL as a full disk would, and roll the transaction back itself.
  const pages = Number((db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count);
  db.exec(`PRAGMA max_page_count = ${pages + 2}`);
  const insert = () => db.prepare("INSERT INTO audit_events (at, event, detail) VALUES (?, 'x', ?)");
  assert.throws(
    () => db.transaction(() => { for (let i = 0; i < 200; i++) insert().run(i, "y".repeat(3000)); }),
    /database or disk is full/,
  );
  assert.equal(db.inTransaction(), false);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM audit_events").get() as { n: number }).n, 0);
  db.close();
});

test("a COMMIT that fails throws, and the transaction's writes are gone", () => {
  const db = openDatabase(":memory:");
  // A deferred foreign key is checked at COMMIT: a way to make the commit itself fail, as a full disk can.
  db.exec("PRAGMA defer_foreign_keys = ON");
  assert.throws(() => db.transaction(() => {
    db.prepare(`INSERT INTO clients (client_id, secret_hash, name, grant_type, scope, integration_user_id, created_at)
      VALUES ('c', 'h', 'C', 'client_credentials', 'fields:read', 999, 1)`).run();
  }), /FOREIGN KEY constraint failed/);
  assert.equal(db.inTransaction(), false);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM clients").get() as { n: number }).n, 0);
  db.close();
});

test("a batched write that fills the database fails its whole batch with the full-disk error", async () => {
  const db = openDatabase(":memory:");
  const pages = Number((db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count);
  db.exec(`PRAGMA max_page_count = ${pages + 2}`);
  const insert = (detail: string) => () => db.prepare("INSERT INTO audit_events (at, event, detail) VALUES (1, 'x', ?)").run(detail);
  // SQLite rolls the whole transaction back on SQLITE_FULL: the small write sharing the batch is gone too, so it
  // must not be acknowledged, and both callers hear the cause (not "no such savepoint").
  const results = await Promise.allSettled([
    db.transactionBatched(insert("small")),
    db.transactionBatched(() => { for (let i = 0; i < 200; i++) insert("y".repeat(3000))(); }),
  ]);
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected"]);
  for (const r of results) assert.match(String((r as PromiseRejectedResult).reason), /database or disk is full/);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM audit_events").get() as { n: number }).n, 0);
  db.close();
});

test("a batched write alone in its commit that fills the database fails with the full-disk error", async () => {
  const db = openDatabase(":memory:");
  const pages = Number((db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count);
  db.exec(`PRAGMA max_page_count = ${pages + 2}`);
  const insert = () => db.prepare("INSERT INTO audit_events (at, event, detail) VALUES (1, 'x', ?)").run("y".repeat(3000));
  // SQLite has rolled back already: the caller hears the cause, not a failed ROLLBACK or COMMIT.
  await assert.rejects(db.transactionBatched(() => { for (let i = 0; i < 200; i++) insert(); }), /database or disk is full/);
  assert.equal(db.inTransaction(), false);
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM audit_events").get() as { n: number }).n, 0);
  db.close();
});

test("readTogether: reads in one call see one snapshot while another connection commits between them", () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const db = openDatabase(path);
  const other = new DatabaseSync(path);
  const count = () => Number(db.prepare("SELECT COUNT(*) AS n FROM organizations").get()?.n);
  const commitElsewhere = (slug: string) =>
    other.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, 'x', 1)").run(slug);
  try {
    const [before, after] = db.readTogether(() => {
      const first = count();
      commitElsewhere("during");
      return [first, count()];
    });
    assert.equal(after, before, "the second read still sees the first one's snapshot");
    assert.equal(db.inTransaction(), false, "the read transaction is closed");
    assert.equal(count(), before + 1, "afterwards the other connection's commit is visible");
    // Without it, each statement takes its own snapshot: what readTogether is for.
    const first = count();
    commitElsewhere("between");
    assert.equal(count(), first + 1);
  } finally {
    other.close();
    db.close();
    cleanup();
  }
});

test("readTogether closes its transaction when a read throws, and inside a transaction joins it", () => {
  const db = openDatabase(":memory:");
  try {
    assert.throws(() => db.readTogether(() => db.prepare("SELECT * FROM no_such_table").all()), /no such table/);
    assert.equal(db.inTransaction(), false);
    const seen = db.transaction(() => {
      db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES ('inside', 'x', 1)").run();
      return db.readTogether(() => db.prepare("SELECT slug FROM organizations WHERE slug = 'inside'").get()?.slug);
    });
    assert.equal(seen, "inside", "the read sees the enclosing transaction's own write");
    assert.equal(db.prepare("SELECT COUNT(*) AS n FROM organizations WHERE slug = 'inside'").get()?.n, 1, "and did not end it early");
  } finally {
    db.close();
  }
});

test("deleted and overwritten rows leave no readable trace in the file once checkpointed (secure_delete)", () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const db = openDatabase(path, { autoCheckpointPages: 0 });
  try {
    db.transaction(() => {
      const insert = db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, 1)");
      insert.run("kept", "kept-organization-name");
      insert.run("gone", "deleted-organization-marker");
      insert.run("renamed", "overwritten-name-marker");
    });
    db.checkpoint("TRUNCATE");
    db.transaction(() => {
      db.prepare("DELETE FROM organizations WHERE slug = 'gone'").run();
      db.prepare("UPDATE organizations SET name = 'x' WHERE slug = 'renamed'").run();
    });
    db.checkpoint("TRUNCATE");
    const file = readFileSync(path).toString("latin1");
    assert.ok(file.includes("kept-organization-name"), "the scan reads the file's text");
    assert.ok(!file.includes("deleted-organization-marker"));
    assert.ok(!file.includes("overwritten-name-marker"));
  } finally {
    db.close();
    cleanup();
  }
});
