// users add / users list through runCli.
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyPassword } from "../../src/crypto/hash.ts";
import { cliHarness } from "./harness.ts";

test("users add --password-stdin creates a person with a PBKDF2 hash in a new organization", async () => {
  const h = cliHarness();
  const out = await h.json(["users", "add", "--username", "alice@example.com", "--password-stdin", "--org", "acme", "--name", "Alice"], {
    stdin: "correct horse battery\n",
  });
  assert.equal(out.username, "alice@example.com");
  assert.equal(typeof out.id, "number");
  const [row] = h.query("SELECT * FROM users WHERE id = ?", out.id as number);
  assert.equal(row!.kind, "person");
  assert.equal(row!.name, "Alice");
  assert.match(String(row!.password_hash), /^pbkdf2-sha256\$1000\$/);
  // The trailing newline from `echo` is not part of the password.
  assert.equal(await verifyPassword("correct horse battery", String(row!.password_hash)), true);
  assert.equal(h.query("SELECT slug FROM organizations")[0]!.slug, "acme");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM memberships WHERE user_id = ?", out.id as number)[0]!.n, 1);
});

test("users add keeps inner and leading whitespace of a stdin password", async () => {
  const h = cliHarness();
  const out = await h.json(["users", "add", "--username", "bob", "--password-stdin", "--org", "acme"], { stdin: " spaced  secret \r\n" });
  const [row] = h.query("SELECT password_hash FROM users WHERE id = ?", out.id as number);
  assert.equal(await verifyPassword(" spaced  secret ", String(row!.password_hash)), true);
});

test("users add --integration creates a user without a password in an existing organization", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "alice", "--password-stdin", "--org", "acme"], { stdin: "0123456789" });
  const out = await h.json(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const [row] = h.query("SELECT kind, password_hash FROM users WHERE id = ?", out.id as number);
  assert.deepEqual({ ...row }, { kind: "integration", password_hash: null });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM organizations")[0]!.n, 1);
});

test("users add prints a sentence without --json and never the password", async () => {
  const h = cliHarness();
  const result = await h.run(["users", "add", "--username", "alice", "--password-stdin", "--org", "acme"], { stdin: "a secret password" });
  assert.equal(result.code, 0);
  assert.match(result.stdout, /Created user alice/);
  assert.ok(!(result.stdout + result.stderr).includes("a secret password"));
});

test("users list shows users and organizations but never password hashes", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "alice", "--password-stdin", "--org", "acme"], { stdin: "0123456789" });
  await h.json(["users", "add", "--username", "robot", "--integration", "--org", "beta"]);
  const out = await h.json(["users", "list"]);
  const users = out.users as Record<string, unknown>[];
  assert.deepEqual(users.map((u) => [u.username, u.kind, u.organizations]), [["alice", "person", ["acme"]], ["robot", "integration", ["beta"]]]);
  const hash = String(h.query("SELECT password_hash FROM users WHERE username = 'alice'")[0]!.password_hash);
  const text = await h.run(["users", "list"]);
  for (const output of [JSON.stringify(out), text.stdout]) {
    assert.ok(!output.includes(hash.split("$")[3]!));
    assert.ok(!output.includes("pbkdf2"));
  }
  assert.match(text.stdout, /alice\s+person\s+\[acme\]/);
});

test("users list on an empty database says so", async () => {
  const h = cliHarness();
  const result = await h.run(["users", "list"]);
  assert.equal(result.stdout, "No users.\n");
});
