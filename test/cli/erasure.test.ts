// After an erasure the erased rows' earlier copies leave the -wal file too, even while a server keeps it open.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { cliHarness, type CliHarness } from "./harness.ts";

const NAME = "Zzyzx Unforgettable";

/** Bytes of the database file and its -wal that still spell the erased name. */
function traces(h: CliHarness): string[] {
  return [h.dbPath, `${h.dbPath}-wal`].filter((file) => existsSync(file) && readFileSync(file).includes(NAME));
}

/** A user named NAME, while another connection (a running server, say) holds the database open. */
async function userWithServerConnection(h: CliHarness): Promise<DatabaseSync> {
  h.createDatabase();
  const server = new DatabaseSync(h.dbPath);
  // A read the server had going while the user was added keeps that commit from being checkpointed when the CLI
  // closes, so the WAL is not started over by the next write and the delete's frames land after the add's, as on
  // a server under load; without it, the delete could overwrite the add's frames by chance.
  server.exec("BEGIN");
  server.prepare("SELECT COUNT(*) FROM users").get();
  const added = await h.run(["users", "add", "--username", "zed@example.com", "--name", NAME, "--org", "acme", "--password-stdin"], {
    stdin: "correct horse battery",
  });
  assert.equal(added.code, 0, added.stderr);
  server.exec("COMMIT");
  assert.ok(traces(h).length > 0, "the premise: the name is on disk");
  return server;
}

test("users delete leaves no copy of the erased name in the database or its -wal while another connection is open", async () => {
  const h = cliHarness();
  const server = await userWithServerConnection(h);
  try {
    const result = await h.run(["users", "delete", "zed@example.com"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
    assert.deepEqual(traces(h), []);
    assert.equal(server.prepare("SELECT COUNT(*) AS n FROM users WHERE name IS NOT NULL").get()?.n, 0, "the server still reads");
  } finally {
    server.close();
  }
});

test("users delete while another connection keeps reading an old snapshot still erases, and says the -wal keeps copies", async () => {
  const h = cliHarness();
  const server = await userWithServerConnection(h);
  try {
    server.exec("BEGIN");
    server.prepare("SELECT COUNT(*) FROM users").get();
    const result = await h.run(["users", "delete", "zed@example.com"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Deleted user zed@example\.com/);
    assert.match(result.stderr, /^note: another connection kept using .*-wal, so earlier copies of what was erased stay in it/);
    server.exec("COMMIT");
    // The next attempt, once the reader is gone, empties it.
    assert.equal((await h.run(["purge"])).stderr, "");
    assert.deepEqual(traces(h), []);
  } finally {
    server.close();
  }
});
