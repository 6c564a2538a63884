// The store's error kinds: conflicts, and a database another connection keeps locked.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { isStoreBusy, StoreBusyError, StoreConflictError } from "../../src/store/errors.ts";

test("isStoreBusy knows SQLite's own 'database is locked' and StoreBusyError, and nothing else", () => {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-locked-"));
  const path = join(dir, "locked.db");
  const holder = new DatabaseSync(path);
  const waiter = new DatabaseSync(path, { timeout: 0 });
  try {
    holder.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v)");
    holder.exec("BEGIN IMMEDIATE");
    let locked: unknown;
    try {
      waiter.exec("BEGIN IMMEDIATE");
    } catch (error) {
      locked = error;
    }
    assert.ok(locked instanceof Error, "the second writer was refused");
    assert.equal(isStoreBusy(locked), true, String(locked));
    holder.exec("ROLLBACK");
  } finally {
    waiter.close();
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(isStoreBusy(new StoreBusyError("x")), true);
  assert.equal(isStoreBusy(new StoreConflictError("x")), false);
  assert.equal(isStoreBusy(new Error("no such table: t")), false);
  assert.equal(isStoreBusy("database is locked"), false);
});
