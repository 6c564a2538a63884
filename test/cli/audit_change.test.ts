// An admin command whose change committed but whose audit row could not be written still reports what it did.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { cliHarness, type CliHarness } from "./harness.ts";

/** From now on every audit row fails to insert, as on a full disk. */
function breakAuditTable(h: CliHarness): void {
  const db = new DatabaseSync(h.dbPath);
  db.exec("CREATE TRIGGER audit_fails BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;");
  db.close();
}

test("clients rotate-secret whose audit row fails still shows the new secret, which works, and warns", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme"]);
  const created = await h.json(["clients", "add", "--name", "Job", "--grant", "client_credentials", "--integration-user", "robot@example.com", "--scope", "fields:read"]);
  breakAuditTable(h);
  const result = await h.run(["clients", "rotate-secret", String(created.client_id), "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const { client_secret: secret } = JSON.parse(result.stdout) as { client_secret: string };
  assert.equal(h.query("SELECT secret_hash FROM clients")[0]!.secret_hash, await sha256Hex(secret), "the secret shown is the one stored");
  assert.match(result.stderr, /^warning: done, but its audit event \(secret_rotated\) could not be written: database or disk is full\n$/);
  assert.ok(h.log.some((l) => l.event === "audit_write_failed" && l.fields.audit_event === "secret_rotated"));
  assert.ok(h.log.some((l) => l.event === "audit.secret_rotated"), "the log stream keeps the trail the table missed");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM audit_events WHERE event = 'secret_rotated'")[0]!.n, 0);
});

test("users delete whose audit row fails reports the deletion it made, instead of failing a command that cannot be rerun", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "ann@example.com", "--org", "acme", "--password-stdin"], { stdin: "correct horse battery" });
  breakAuditTable(h);
  const result = await h.run(["users", "delete", "ann@example.com"]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^Deleted user ann@example\.com/);
  assert.match(result.stderr, /audit event \(user_deleted\) could not be written/);
  assert.ok(h.log.some((l) => l.event === "audit.user_deleted"));
  assert.equal((await h.run(["users", "delete", "ann@example.com"])).code, 2, "it was deleted: a rerun finds no such user");
});
