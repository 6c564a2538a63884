// createReadViews, createReadCache and Db.changeStamp: a kept read is returned only while the database provably did not change.
import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createReadCache, createReadViews } from "../../../src/store/sqlite/read_cache.ts";
import { type Db, openDatabase } from "../../../src/store/sqlite/database.ts";
import { tempDb } from "../../helpers/temp_db.ts";

/** A stamp source the test moves by hand, its views, and a loader that counts its calls. */
function harness(maxEntries = 8, maxKeyLength = 16) {
  const state = { stamp: "1", loads: 0, inTransaction: false, commitDuringLoad: false };
  const source = { changeStamp: () => state.stamp, inTransaction: () => state.inTransaction };
  const view = createReadViews(source);
  const cache = createReadCache<{ key: string; load: number }>(source, { maxEntries, maxKeyLength });
  const read = (key: string, found = true, under = view()) =>
    cache.read(under, key, () => {
      state.loads++;
      // Another connection commits while (or just before) this load reads.
      if (state.commitDuringLoad) state.stamp = String(Number(state.stamp) + 1);
      return found ? { key, load: state.loads } : undefined;
    });
  return { state, read, view };
}

test("the view stays the same object while the stamp stays, and is a new one once it moves", () => {
  const { state, view } = harness();
  const first = view();
  assert.equal(view(), first);
  state.stamp = "2";
  const second = view();
  assert.notEqual(second, first);
  assert.equal(view(), second);
  assert.ok(Object.isFrozen(second));
});

test("a read is loaded once and then served from the cache while the stamp stays", () => {
  const { state, read } = harness();
  const first = read("a");
  assert.equal(read("a"), first);
  assert.equal(read("a"), first);
  assert.equal(state.loads, 1);
  assert.notEqual(read("b"), first);
  assert.equal(state.loads, 2);
});

test("a moved stamp starts a view with nothing kept: every key loads again", () => {
  const { state, read } = harness();
  const a = read("a");
  read("b");
  state.stamp = "2";
  assert.notEqual(read("a"), a);
  read("b");
  assert.equal(state.loads, 4);
});

test("a request still holding an older view gets that view's answers, not the newer view's", () => {
  const { state, read, view } = harness();
  const old = view();
  const before = read("a", true, old);
  state.stamp = "2";
  const after = read("a");
  assert.notEqual(after, before);
  assert.equal(read("a", true, old), before);
  assert.equal(read("a"), after);
  assert.equal(state.loads, 2);
});

test("an undefined result is not kept, so an unknown key is asked again every time", () => {
  const { state, read } = harness();
  assert.equal(read("missing", false), undefined);
  assert.equal(read("missing", false), undefined);
  assert.equal(state.loads, 2);
});

test("a value loaded inside an open transaction is not kept: a rollback would move no stamp", () => {
  const { state, read } = harness();
  state.inTransaction = true;
  read("a");
  state.inTransaction = false;
  read("a");
  assert.equal(state.loads, 2);
  read("a");
  assert.equal(state.loads, 2);
});

test("a value loaded after a commit is returned but not kept under the older view the request holds", () => {
  const { state, read, view } = harness();
  const old = view();
  state.commitDuringLoad = true;
  const first = read("a", true, old);
  assert.equal(first?.load, 1);
  state.commitDuringLoad = false;
  // Not the view's moment: the next request under the old view loads again instead of mixing moments.
  assert.notEqual(read("a", true, old), first);
  assert.equal(state.loads, 2);
  // Under the view of now it is kept as usual.
  const fresh = read("a");
  assert.equal(read("a"), fresh);
  assert.equal(state.loads, 3);
});

test("a key longer than the limit is never kept: keys carry text a client chose", () => {
  const { state, read } = harness(8, 4);
  read("abcde");
  read("abcde");
  assert.equal(state.loads, 2);
  read("abcd");
  read("abcd");
  assert.equal(state.loads, 3);
});

test("a full view starts over instead of growing past its bound", () => {
  const { state, read } = harness(2);
  read("a");
  read("b");
  read("c"); // full: starts over with c alone
  assert.equal(state.loads, 3);
  read("c");
  assert.equal(state.loads, 3);
  read("a");
  assert.equal(state.loads, 4);
});

function withTwoConnections(run: (own: Db, other: Db) => void) {
  const { path, cleanup } = tempDb("fieldgate-stamp-");
  const own = openDatabase(path, { autoCheckpointPages: 0 });
  const other = openDatabase(path, { autoCheckpointPages: 0 });
  try {
    run(own, other);
  } finally {
    own.close();
    other.close();
    cleanup();
  }
}

const insertOrg = (db: Db, slug: string) =>
  db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, 0)").run(slug, slug);

test("changeStamp stays put while nothing is written, reads included", () => {
  withTwoConnections((own, other) => {
    const before = own.changeStamp();
    own.prepare("SELECT COUNT(*) AS n FROM organizations").get();
    other.prepare("SELECT COUNT(*) AS n FROM organizations").get();
    assert.equal(own.changeStamp(), before);
  });
});

test("changeStamp moves when another connection commits (another process or worker)", () => {
  withTwoConnections((own, other) => {
    const before = own.changeStamp();
    insertOrg(other, "elsewhere");
    assert.notEqual(own.changeStamp(), before);
  });
});

test("changeStamp moves when this connection writes, in or out of a transaction, even if it rolls back", () => {
  withTwoConnections((own) => {
    const s0 = own.changeStamp();
    insertOrg(own, "autocommit");
    const s1 = own.changeStamp();
    assert.notEqual(s1, s0);
    own.transaction(() => insertOrg(own, "in-transaction"));
    const s2 = own.changeStamp();
    assert.notEqual(s2, s1);
    assert.throws(() =>
      own.transaction(() => {
        insertOrg(own, "rolled-back");
        throw new Error("abort");
      })
    );
    assert.notEqual(own.changeStamp(), s2);
  });
});
