// users add / users list through runCli.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { verifyPassword } from "../../src/crypto/hash.ts";
import { cliHarness } from "./harness.ts";
import { openStore } from "../../src/store/sqlite/store.ts";

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
  h.createDatabase();
  const result = await h.run(["users", "list"]);
  assert.equal(result.stdout, "No users.\n");
});

/** alice (a person) with one sign-in session and one live access token, straight in the database. */
async function aliceSignedIn(h: ReturnType<typeof cliHarness>) {
  await h.json(["users", "add", "--username", "alice@example.com", "--password-stdin", "--org", "acme"], { stdin: "correct horse battery" });
  await h.json(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme"]);
  const client = await h.json(["clients", "add", "--name", "web", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read"]);
  const store = openStore(h.dbPath);
  const alice = (await store.users.findByUsername("alice@example.com"))!;
  const clientRow = (await store.clients.findByClientId(String(client.client_id)))!;
  const now = h.clock.nowSeconds();
  await store.sessions.insert({ sessionHash: "s".repeat(64), userId: alice.id, createdAt: now, expiresAt: now + 3600 });
  await store.tokens.issue({
    clientId: clientRow.id, userId: alice.id, familyId: null,
    tokens: [{ tokenHash: "t".repeat(64), kind: "access", grantType: "authorization_code", scope: "fields:read", issuedAt: now, expiresAt: now + 3600 }],
  });
  await store.close();
  const check = async () => {
    const s = openStore(h.dbPath);
    try {
      return {
        session: Boolean(await s.sessions.findActive("s".repeat(64), now)),
        token: Boolean(await s.tokens.findActiveAccess("t".repeat(64), now)),
      };
    } finally {
      await s.close();
    }
  };
  return { check };
}

test("users disable ends the user's sessions and refuses their tokens; users enable lets the tokens work again", async () => {
  const h = cliHarness();
  const { check } = await aliceSignedIn(h);
  assert.deepEqual(await check(), { session: true, token: true });
  const out = await h.json(["users", "disable", "alice@example.com"]);
  assert.deepEqual(out, { username: "alice@example.com", disabled: true, sessions_ended: 1, tokens_revoked: 0 });
  assert.deepEqual(await check(), { session: false, token: false });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM sessions")[0]!.n, 0, "the session is gone, not just refused");
  assert.match((await h.run(["users", "list"])).stdout, /alice@example\.com  person \(disabled\)/);
  const enabled = await h.run(["users", "enable", "alice@example.com"]);
  assert.equal(enabled.stdout, "Enabled user alice@example.com.\n");
  assert.deepEqual(await check(), { session: false, token: true });
  const events = h.query("SELECT event, user_id FROM audit_events WHERE event LIKE 'user_%abled' ORDER BY id");
  assert.deepEqual(events.map((e) => e.event), ["user_disabled", "user_enabled"]);
});

test("users disable --revoke-tokens revokes the user's tokens for good: enabling again does not bring them back", async () => {
  const h = cliHarness();
  const { check } = await aliceSignedIn(h);
  // A remembered approval would hand the application a new code without asking: it goes too.
  const [alice] = h.query("SELECT id FROM users WHERE username = 'alice@example.com'");
  const [client] = h.query("SELECT id FROM clients WHERE grant_type = 'authorization_code'");
  const store = openStore(h.dbPath);
  await store.consents.grant(Number(alice!.id), Number(client!.id), { scope: "fields:read", now: h.clock.nowSeconds() });
  await store.close();
  const out = await h.json(["users", "disable", "alice@example.com", "--revoke-tokens"]);
  assert.deepEqual(out, { username: "alice@example.com", disabled: true, sessions_ended: 1, tokens_revoked: 1 });
  await h.json(["users", "enable", "alice@example.com"]);
  assert.deepEqual(await check(), { session: false, token: false });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE revoked_at IS NULL")[0]!.n, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM consents")[0]!.n, 0);
  const [event] = h.query("SELECT detail FROM audit_events WHERE event = 'user_disabled'");
  assert.deepEqual(JSON.parse(String(event!.detail)), { sessions_ended: 1, tokens_revoked: 1 });
});

test("users set-password --revoke-tokens also revokes every token of the user", async () => {
  const h = cliHarness();
  const { check } = await aliceSignedIn(h);
  const result = await h.run(["users", "set-password", "alice@example.com", "--password-stdin", "--revoke-tokens"], { stdin: "a brand new passphrase" });
  assert.equal(result.stdout, "Set a new password for alice@example.com; 1 sign-in session ended, 1 token revoked.\n");
  assert.deepEqual(await check(), { session: false, token: false });
});

test("users set-password replaces the password and ends every session of the user", async () => {
  const h = cliHarness();
  const { check } = await aliceSignedIn(h);
  const result = await h.run(["users", "set-password", "alice@example.com", "--password-stdin"], { stdin: "a brand new passphrase\n" });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, "Set a new password for alice@example.com; 1 sign-in session ended.\n");
  assert.ok(!(result.stdout + result.stderr).includes("a brand new passphrase"));
  const [row] = h.query("SELECT password_hash FROM users WHERE username = 'alice@example.com'");
  assert.equal(await verifyPassword("a brand new passphrase", String(row!.password_hash)), true);
  assert.equal(await verifyPassword("correct horse battery", String(row!.password_hash)), false);
  // Sessions end; tokens the user granted to applications stay (revoking those is the account page's button).
  assert.deepEqual(await check(), { session: false, token: true });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM audit_events WHERE event = 'password_changed'")[0]!.n, 1);
});

test("users set-password refuses an integration user (exit 1), an unknown one and a missing or short password (exit 2)", async () => {
  const h = cliHarness();
  await aliceSignedIn(h);
  const before = h.snapshot();
  const robot = await h.run(["users", "set-password", "robot@example.com", "--password-stdin"], { stdin: "a brand new passphrase" });
  assert.equal(robot.code, 1);
  assert.match(robot.stderr, /integration user/);
  for (const [args, stdin, message] of [
    [["users", "set-password", "nobody@example.com", "--password-stdin"], "a brand new passphrase", /no user "nobody@example.com"/],
    [["users", "set-password", "alice@example.com"], "a brand new passphrase", /--password-stdin is required/],
    [["users", "set-password", "alice@example.com", "--password-stdin"], "short", /at least 10/],
    [["users", "disable", "nobody@example.com"], "", /no user/],
  ] as const) {
    const result = await h.run([...args], { stdin });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.equal(result.stdout, "");
  }
  assert.equal(h.snapshot(), before, "nothing was written");
});

test("users add --org-name names the organization it creates; an existing one keeps its name, with a note", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "alice", "--integration", "--org", "acme", "--org-name", " Acme Farms Ltd. "]);
  assert.equal(h.query("SELECT name FROM organizations WHERE slug = 'acme'")[0]!.name, "Acme Farms Ltd.");
  const again = await h.run(["users", "add", "--username", "bob", "--integration", "--org", "acme", "--org-name", "Other"]);
  assert.equal(again.code, 0);
  assert.match(again.stderr, /acme already exists as "Acme Farms Ltd\."; --org-name names an organization only when it is created/);
  assert.equal(h.query("SELECT name FROM organizations WHERE slug = 'acme'")[0]!.name, "Acme Farms Ltd.");
  await h.json(["users", "add", "--username", "carol", "--integration", "--org", "globex"]);
  assert.equal(h.query("SELECT name FROM organizations WHERE slug = 'globex'")[0]!.name, "globex", "the slug by default");
  const blank = await h.run(["users", "add", "--username", "dan", "--integration", "--org", "initech", "--org-name", "  "]);
  assert.equal(blank.code, 2);
});

test("users delete erases a person: access ends, identifying data goes, the id stays taken and the name is free", async () => {
  const h = cliHarness();
  const { check } = await aliceSignedIn(h);
  const [alice] = h.query("SELECT id FROM users WHERE username = 'alice@example.com'");
  const aliceId = Number(alice!.id);
  const [client] = h.query("SELECT id FROM clients WHERE grant_type = 'authorization_code'");
  const store = openStore(h.dbPath);
  const now = h.clock.nowSeconds();
  await store.consents.grant(aliceId, Number(client!.id), { scope: "fields:read", now });
  await store.audit.insert({ at: now, event: "sign_in_succeeded", clientId: null, userId: aliceId, ip: "203.0.113.5", detail: null });
  await store.audit.insert({ at: now, event: "sign_in_failed", clientId: null, userId: null, ip: "198.51.100.7", detail: null });
  await store.close();

  const out = await h.json(["users", "delete", "alice@example.com"]);
  assert.deepEqual(out, {
    username: "alice@example.com", deleted: true, sessions_ended: 1, tokens_revoked: 1, consents_removed: 1,
    memberships_removed: 1, audit_events_anonymized: 1,
  });
  assert.deepEqual(await check(), { session: false, token: false });
  for (const table of ["sessions", "tokens", "consents", "memberships", "grant_families", "authorization_codes"]) {
    assert.equal(h.query(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`, aliceId)[0]!.n, 0, table);
  }
  const [tombstone] = h.query("SELECT username, name, password_hash, disabled, deleted_at FROM users WHERE id = ?", aliceId);
  assert.deepEqual({ ...tombstone }, { username: `(deleted user ${aliceId})`, name: null, password_hash: null, disabled: 1, deleted_at: now });
  assert.deepEqual(h.query("SELECT ip FROM audit_events WHERE event LIKE 'sign_in%' ORDER BY id").map((r) => r.ip), [null, "198.51.100.7"]);
  const [deleted] = h.query("SELECT user_id, detail FROM audit_events WHERE event = 'user_deleted'");
  assert.equal(deleted!.user_id, aliceId);
  assert.doesNotMatch(JSON.stringify(h.query("SELECT * FROM audit_events")), /alice/, "the audit trail does not keep the name");

  assert.doesNotMatch((await h.run(["users", "list"])).stdout, /alice|deleted/);
  const again = await h.run(["users", "delete", "alice@example.com"]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /no user "alice@example.com"/);
  // The name is free again; the new account gets a new id, so the old audit rows never point at it.
  const newcomer = await h.json(["users", "add", "--username", "alice@example.com", "--password-stdin", "--org", "acme"], { stdin: "another good passphrase" });
  assert.ok(Number(newcomer.id) > aliceId);
});

test("users delete refuses the integration user a client acts as (exit 1) and changes nothing", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "robot@example.com", "--integration", "--org", "acme"]);
  const client = await h.json(["clients", "add", "--name", "Job", "--grant", "client_credentials", "--integration-user", "robot@example.com", "--scope", "fields:read"]);
  const before = h.snapshot();
  const result = await h.run(["users", "delete", "robot@example.com"]);
  assert.equal(result.code, 1);
  assert.equal(result.stderr, `fieldgate users delete: robot@example.com is the integration user of client ${client.client_id}: disable the client instead\n`);
  assert.equal(h.snapshot(), before);
  // One no client acts as can go.
  await h.json(["users", "add", "--username", "spare@example.com", "--integration", "--org", "acme"]);
  assert.equal((await h.json(["users", "delete", "spare@example.com"])).deleted, true);
});

test("users join and users leave change a user's organizations, idempotently, and leave an audit trail", async () => {
  const h = cliHarness();
  await h.json(["users", "add", "--username", "alice@example.com", "--password-stdin", "--org", "acme"], { stdin: "correct horse battery" });
  await h.json(["users", "add", "--username", "bob@example.com", "--password-stdin", "--org", "globex"], { stdin: "correct horse battery" });
  const orgsOf = async () => ((await h.json(["users", "list"])).users as { username: string; organizations: string[] }[])
    .find((u) => u.username === "alice@example.com")!.organizations;
  assert.deepEqual(await h.json(["users", "join", "alice@example.com", "--org", "globex"]),
    { username: "alice@example.com", organization: "globex", joined: true, organization_created: false });
  assert.deepEqual(await orgsOf(), ["acme", "globex"]);
  assert.equal((await h.run(["users", "join", "alice@example.com", "--org", "globex"])).stdout, "alice@example.com already was a member of globex.\n");
  assert.equal((await h.run(["users", "join", "alice@example.com", "--org", "initech"])).stdout,
    "alice@example.com is now a member of initech (a new organization).\n");
  assert.deepEqual(await h.json(["users", "leave", "alice@example.com", "--org", "acme"]), { username: "alice@example.com", organization: "acme", left: true });
  assert.deepEqual(await orgsOf(), ["globex", "initech"]);
  assert.equal((await h.run(["users", "leave", "alice@example.com", "--org", "acme"])).stdout, "alice@example.com was not a member of acme.\n");
  const events = h.query("SELECT event, detail FROM audit_events WHERE event LIKE 'membership_%' ORDER BY id");
  assert.deepEqual(events.map((e) => [e.event, JSON.parse(String(e.detail)).organization]),
    [["membership_added", "globex"], ["membership_added", "initech"], ["membership_removed", "acme"]]);
  // Bad arguments change nothing: exit 2.
  const before = h.snapshot();
  for (const args of [
    ["users", "leave", "alice@example.com", "--org", "nowhere"],
    ["users", "join", "alice@example.com", "--org", "Not A Slug"],
    ["users", "join", "nobody@example.com", "--org", "acme"],
    ["users", "join", "alice@example.com"],
  ]) assert.equal((await h.run(args)).code, 2, args.join(" "));
  assert.equal(h.snapshot(), before);
});
