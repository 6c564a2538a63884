// `backup FILE`: a consistent copy, taken while another connection (a running server) has commits in its WAL.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { openStore } from "../../src/store/sqlite/store.ts";
import { cliHarness } from "./harness.ts";
import { runCli } from "../../src/cli/main.ts";

test("backup copies every committed row, including those still in the live WAL, into a sound file", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  // The "server": automatic checkpoints off, as serve runs, so its latest commits sit in the -wal file only.
  const server = openStore(h.dbPath, { autoCheckpointPages: 0 });
  try {
    await server.users.insert({ username: "late", kind: "integration", now: 1 });
    const path = join(h.dir, "copy.db");
    const out = await h.json(["backup", path]);
    assert.deepEqual(out, { backup: path, database: h.dbPath });
    const copy = new DatabaseSync(path, { readOnly: true });
    try {
      assert.deepEqual(copy.prepare("SELECT username FROM users ORDER BY id").all().map((r) => r.username), ["robot", "late"]);
      assert.equal(copy.prepare("PRAGMA integrity_check").get()?.integrity_check, "ok");
      // A self-contained file: no WAL of its own to carry along.
      assert.equal(copy.prepare("PRAGMA journal_mode").get()?.journal_mode, "delete");
    } finally {
      copy.close();
    }
  } finally {
    await server.close();
  }
});

test("backup never overwrites a file (exit 2) and reports a file it cannot create (exit 1)", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const existing = h.file("old-backup.db", "an older backup worth keeping");
  const refused = await h.run(["backup", existing]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /already exists; choose a new file name/);
  assert.equal(readFileSync(existing, "utf8"), "an older backup worth keeping");
  const live = await h.run(["backup", h.dbPath]);
  assert.equal(live.code, 2, "the live database itself is never the target");
  const nowhere = await h.run(["backup", join(h.dir, "no-such-dir", "copy.db")]);
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, /cannot write/);
});

test("backup refuses an existing empty file and the database's own -wal name, and writes a private copy", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const empty = join(h.dir, "empty.db");
  writeFileSync(empty, "");
  const refused = await h.run(["backup", empty]);
  assert.equal(refused.code, 2, "SQLite would write into an empty file; an existing name is never the target");
  assert.equal(statSync(empty).size, 0);
  const wal = await h.run(["backup", `${h.dbPath}-wal`]);
  assert.equal(wal.code, 2);
  assert.match(wal.stderr, /one of the database's own files/);
  assert.equal(existsSync(`${h.dbPath}-wal`), false);
  const copy = join(h.dir, "copy.db");
  assert.equal((await h.run(["backup", copy])).code, 0);
  assert.equal(statSync(copy).mode & 0o777, 0o600, "the copy holds password hashes and secret digests");
});

test("backup refuses the database's own -journal, -wal and -shm however the path is spelled", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  mkdirSync(join(h.dir, "sub"));
  symlinkSync(h.dir, join(h.dir, "link"));
  const name = basename(h.dbPath);
  for (const target of [join(h.dir, "link", `${name}-journal`), `${h.dir}/sub/../${name}-wal`, `${h.dir}/./${name}-shm`]) {
    const refused = await h.run(["backup", target]);
    assert.equal(refused.code, 2, target);
    assert.match(refused.stderr, /one of the database's own files/, target);
    assert.equal(existsSync(target), false, target);
  }
  // "link/.." goes through the link to its target's parent, as the kernel resolves it, not back to where it started.
  mkdirSync(join(h.dir, "elsewhere"));
  symlinkSync(join(h.dir, "sub"), join(h.dir, "elsewhere", "up"));
  const dotted = join(h.dir, "elsewhere") + `/up/../${name}-journal`;
  const viaLink = await h.run(["backup", dotted]);
  assert.equal(viaLink.code, 2, dotted);
  assert.equal(existsSync(`${h.dbPath}-journal`), false);
  // Through the symlinked directory, any other name is an ordinary new file.
  assert.equal((await h.run(["backup", join(h.dir, "link", "copy.db")])).code, 0);
});

test("a backup that fails halfway leaves no file that could pass for a backup", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const deps = h.deps();
  const open = deps.openStore;
  deps.openStore = async (path, options) => {
    const store = await open(path, options);
    store.maintenance!.backupTo = async () => {
      throw new Error("database or disk is full");
    };
    return store;
  };
  let stderr = "";
  const io = { stdout: () => {}, stderr: (text: string) => void (stderr += text), readStdin: async () => "", isTTY: false };
  const target = join(h.dir, "copy.db");
  const code = await runCli(["backup", target, "--db", h.dbPath], io, deps);
  assert.equal(code, 1);
  assert.match(stderr, /cannot write .*database or disk is full/);
  assert.equal(existsSync(target), false);
});
