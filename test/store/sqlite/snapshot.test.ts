// src/store/sqlite/snapshot.ts: read-only snapshots of an existing SQLite file.
import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openSnapshot } from "../../../src/store/sqlite/snapshot.ts";
import { tempDb } from "../../helpers/temp_db.ts";

test("openSnapshot reads one snapshot of an existing file, read only and without migrating it", () => {
  const { path, cleanup } = tempDb("fieldgate-sqlite-");
  const writer = new DatabaseSync(path);
  try {
    writer.exec("PRAGMA journal_mode = WAL; CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('a')");
    const snapshot = openSnapshot(path);
    try {
      assert.equal(snapshot.all("SELECT COUNT(*) AS n FROM notes")[0]?.n, 1);
      writer.exec("INSERT INTO notes (text) VALUES ('b')");
      assert.deepEqual([...snapshot.iterate("SELECT id, text FROM notes")], [[1, "a"]], "the later write is not seen");
      assert.throws(() => snapshot.all("INSERT INTO notes (text) VALUES ('c') RETURNING id"), /readonly/);
    } finally {
      snapshot.close();
    }
    const tables = writer.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name);
    assert.deepEqual(tables, ["notes"], "no schema_migrations: nothing was migrated");
  } finally {
    writer.close();
    cleanup();
  }
});
