// runCli itself: help, --json shape, config from env and flags, purge and audit.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { COMMANDS } from "../../src/cli/main.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import { cliHarness, setupOrg, squares } from "./harness.ts";

test("--help alone lists every command on stdout with exit 0", async () => {
  const h = cliHarness();
  const result = await h.run(["--help"]);
  assert.equal(result.code, 0);
  for (const command of COMMANDS) assert.ok(result.stdout.includes(command.name), command.name);
});

test("--help keeps every command's usage apart from its summary, however long the usage", async () => {
  const { stdout } = await cliHarness().run(["--help"]);
  for (const command of COMMANDS) {
    const usage = ["", command.name, ...command.positionals].join(" ").trimStart();
    const line = stdout.split("\n").find((l) => l.trimStart().startsWith(usage + " "));
    assert.ok(line, `no line for ${usage}`);
    assert.ok(line.includes(`${usage}  `) && line.trimEnd().endsWith(command.summary), line);
  }
});

test("--version prints package.json's version on stdout with exit 0 and opens no database", async () => {
  const h = cliHarness();
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  const result = await h.run(["--version"]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `${version}\n`);
  assert.equal(h.snapshot(), "absent");
});

for (const command of COMMANDS) {
  test(`${command.name} --help shows its usage and opens no database`, async () => {
    const h = cliHarness();
    const result = await h.run([...command.name.split(" "), "--help"]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, new RegExp(`^Usage: fieldgate ${command.name}`));
    assert.match(result.stdout, /--db PATH/);
    assert.equal(h.snapshot(), "absent");
  });
}

test("FIELDGATE_DB chooses the database when --db is absent, and --db wins over it", async () => {
  const h = cliHarness();
  const fromEnv = join(h.dir, "env.db");
  await h.run(["users", "add", "--username", "r", "--integration", "--org", "acme"], { env: { FIELDGATE_DB: fromEnv } });
  assert.ok(existsSync(fromEnv));
  assert.equal(h.snapshot(), "absent");
  await h.run(["users", "add", "--username", "s", "--integration", "--org", "acme", "--db", h.dbPath], { env: { FIELDGATE_DB: fromEnv } });
  assert.equal(h.query("SELECT username FROM users")[0]!.username, "s");
});

test("a database path in a missing directory is created", async () => {
  const h = cliHarness();
  const nested = join(h.dir, "deep", "er", "fg.db");
  const result = await h.run(["users", "add", "--username", "robot", "--integration", "--org", "acme", "--db", nested]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(existsSync(nested));
});

test("purge reports what it deleted past the retention window; audit events are kept 90 days by default", async () => {
  const h = cliHarness();
  const store = openStore(h.dbPath);
  const now = h.clock.nowSeconds();
  await store.audit.insert({ at: now - 91 * 86_400, event: "old", clientId: null, userId: null, ip: null, detail: null });
  // Past FIELDGATE_RETENTION (7 days), within FIELDGATE_AUDIT_RETENTION (90 days).
  await store.audit.insert({ at: now - 30 * 86_400, event: "month_old", clientId: null, userId: null, ip: null, detail: null });
  await store.audit.insert({ at: now, event: "fresh", clientId: null, userId: null, ip: null, detail: null });
  await store.close();
  const out = await h.json(["purge"]);
  assert.deepEqual(Object.keys(out).sort(), ["auditEvents", "codes", "demoStates", "dpopProofs", "families", "sessions", "tokens"]);
  assert.equal(out.auditEvents, 1);
  assert.deepEqual(h.query("SELECT event FROM audit_events ORDER BY at").map((r) => r.event), ["month_old", "fresh"]);
  const text = (await h.run(["purge"], { env: { FIELDGATE_AUDIT_RETENTION: String(7 * 86_400) } })).stdout;
  assert.match(text, /retention 604800 s, audit retention 604800 s/);
  assert.match(text, /auditEvents\s+1/);
});

test("audit lists events and filters with --since as ISO date or epoch seconds", async () => {
  const h = cliHarness();
  const store = openStore(h.dbPath);
  const now = h.clock.nowSeconds();
  await store.audit.insert({ at: now - 86_400, event: "token_issued", clientId: "c1", userId: 1, ip: "127.0.0.1", detail: { grant_type: "client_credentials" } });
  await store.audit.insert({ at: now, event: "refresh_reuse_detected", clientId: "c1", userId: 1, ip: null, detail: null });
  await store.close();
  const all = await h.json(["audit"]);
  assert.deepEqual((all.events as { event: string }[]).map((e) => e.event), ["token_issued", "refresh_reuse_detected"]);
  const iso = await h.json(["audit", "--since", new Date(now * 1000).toISOString()]);
  assert.deepEqual((iso.events as { event: string }[]).map((e) => e.event), ["refresh_reuse_detected"]);
  const epoch = await h.json(["audit", "--since", String(now - 10), "--limit", "5"]);
  assert.equal((epoch.events as unknown[]).length, 1);
  const text = await h.run(["audit"]);
  assert.match(text.stdout, /token_issued\s+client=c1\s+user=1\s+ip=127\.0\.0\.1/);
});

test("audit --user and --client keep one user's or one client's events, with --since and --limit too", async () => {
  const h = cliHarness();
  const store = openStore(h.dbPath);
  const now = h.clock.nowSeconds();
  const alice = (await store.users.insert({ username: "alice@example.com", kind: "person", now })).id;
  const bob = (await store.users.insert({ username: "bob@example.com", kind: "person", now })).id;
  const event = (at: number, name: string, clientId: string | null, userId: number | null) =>
    store.audit.insert({ at, event: name, clientId, userId, ip: null, detail: null });
  await event(now - 50, "a_old", "c1", alice);
  await event(now - 40, "b_other", "c1", bob);
  await event(now - 30, "a_c2", "c2", alice);
  await event(now - 20, "anon_c2", "c2", null);
  await event(now - 10, "a_new", "c1", alice);
  await store.close();
  const names = async (args: string[]) =>
    ((await h.json(["audit", ...args])).events as { event: string }[]).map((e) => e.event);
  assert.deepEqual(await names(["--user", "alice@example.com"]), ["a_old", "a_c2", "a_new"]);
  assert.deepEqual(await names(["--client", "c2"]), ["a_c2", "anon_c2"]);
  assert.deepEqual(await names(["--user", "alice@example.com", "--client", "c1"]), ["a_old", "a_new"]);
  assert.deepEqual(await names(["--user", "alice@example.com", "--since", String(now - 35), "--limit", "1"]), ["a_c2"]);
  assert.deepEqual(await names(["--user", "alice@example.com", "--limit", "1"]), ["a_new"]);
  const unknown = await h.run(["audit", "--user", "nobody@example.com"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no user "nobody@example.com"/);
});

test("audit --limit shows the latest events without --since and the first ones from T with it, oldest first", async () => {
  const h = cliHarness();
  const store = openStore(h.dbPath);
  const now = h.clock.nowSeconds();
  for (let i = 1; i <= 5; i++) {
    await store.audit.insert({ at: now - 100 + i, event: `event_${i}`, clientId: null, userId: null, ip: null, detail: null });
  }
  await store.close();
  const names = async (args: string[]) => ((await h.json(args)).events as { event: string }[]).map((e) => e.event);
  assert.deepEqual(await names(["audit", "--limit", "2"]), ["event_4", "event_5"]);
  assert.deepEqual(await names(["audit", "--since", String(now - 98), "--limit", "2"]), ["event_2", "event_3"]);
  assert.deepEqual(await names(["audit"]), ["event_1", "event_2", "event_3", "event_4", "event_5"]);
});

test("--json prints exactly one JSON object followed by a newline", async () => {
  const h = cliHarness();
  h.createDatabase();
  const result = await h.run(["users", "list", "--json"]);
  assert.equal(result.stdout.trimEnd().split("\n").length, 1);
  assert.deepEqual(JSON.parse(result.stdout), { users: [] });
});

test("a database written by a newer fieldgate is refused", async () => {
  const h = cliHarness();
  h.createDatabase();
  h.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
  await assert.rejects(h.run(["users", "list"]), /newer than this fieldgate/);
});

test("serve that cannot start also says why as a JSON log line (fatal), for the log collector", async () => {
  const h = cliHarness();
  h.createDatabase();
  h.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
  await assert.rejects(h.run(["serve", "--port", "0"]), /newer than this fieldgate/);
  assert.match(String(h.log.find((l) => l.event === "fatal")?.fields.error), /newer than this fieldgate/);
  await assert.rejects(h.run(["users", "list"]), /newer/);
  assert.equal(h.log.filter((l) => l.event === "fatal").length, 1, "only serve logs it");
});

// Well-formed arguments for every command that needs an existing database: a mistyped --db must not be answered
// from a new, empty file ("No users.") nor leave one behind.
const ON_EXISTING_DATABASE: Record<string, (h: ReturnType<typeof cliHarness>) => { args: string[]; stdin?: string }> = {
  "users list": () => ({ args: ["users", "list"] }),
  "users disable": () => ({ args: ["users", "disable", "alice@example.com"] }),
  "users enable": () => ({ args: ["users", "enable", "alice@example.com"] }),
  "users set-password": () => ({ args: ["users", "set-password", "alice@example.com", "--password-stdin"], stdin: "correct horse battery\n" }),
  "users delete": () => ({ args: ["users", "delete", "alice@example.com"] }),
  "users join": () => ({ args: ["users", "join", "alice@example.com", "--org", "acme"] }),
  "users leave": () => ({ args: ["users", "leave", "alice@example.com", "--org", "acme"] }),
  "clients list": () => ({ args: ["clients", "list"] }),
  "clients show": () => ({ args: ["clients", "show", "abc"] }),
  "clients disable": () => ({ args: ["clients", "disable", "abc"] }),
  "clients enable": () => ({ args: ["clients", "enable", "abc"] }),
  "clients require-dpop": () => ({ args: ["clients", "require-dpop", "abc"] }),
  "clients allow-bearer": () => ({ args: ["clients", "allow-bearer", "abc"] }),
  "clients delete": () => ({ args: ["clients", "delete", "abc"] }),
  "clients rotate-secret": () => ({ args: ["clients", "rotate-secret", "abc"] }),
  "clients set-redirect-uri": () => ({ args: ["clients", "set-redirect-uri", "abc", "https://a.example/cb"] }),
  "fields import": (h) => ({ args: ["fields", "import", "--org", "acme", h.file("f.geojson", squares(1))] }),
  purge: () => ({ args: ["purge"] }),
  audit: () => ({ args: ["audit"] }),
  backup: (h) => ({ args: ["backup", join(h.dir, "copy.db")] }),
};

test("a command that needs a database runs on --db :memory:, an empty one, instead of refusing it", async () => {
  const h = cliHarness();
  const result = await h.run(["users", "list", "--db", ":memory:", "--json"]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { users: [] });
});

test("every command that is not serve, users add, clients add, import doorkeeper, migrate or copy-store is listed here with its arguments", () => {
  const creates = (c: (typeof COMMANDS)[number]) => c.opensDatabase === true || Boolean(c.createsDatabase);
  const needExisting = COMMANDS.filter((c) => !creates(c)).map((c) => c.name).sort();
  assert.deepEqual(needExisting, Object.keys(ON_EXISTING_DATABASE).sort());
  assert.deepEqual(COMMANDS.filter(creates).map((c) => c.name).sort(), ["clients add", "copy-store", "import doorkeeper", "migrate", "serve", "users add"]);
});

for (const [name, build] of Object.entries(ON_EXISTING_DATABASE)) {
  test(`${name} on a path with no database refuses with exit 2 and creates nothing`, async () => {
    const h = cliHarness();
    const missing = join(h.dir, "typo", "fieldgate.db");
    const { args, stdin } = build(h);
    const result = await h.run([...args, "--db", missing], { stdin });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, new RegExp(`no database at ${missing.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: check --db or FIELDGATE_DB`));
    assert.equal(existsSync(missing), false);
    assert.equal(existsSync(join(h.dir, "typo")), false, "not even its directory");
  });
}

test("clients add for client_credentials on a path with no database refuses with exit 2 and creates nothing", async () => {
  const h = cliHarness();
  const missing = join(h.dir, "typo", "fieldgate.db");
  const args = ["clients", "add", "--name", "Sync", "--grant", "client_credentials", "--scope", "fields:read", "--integration-user", "robot"];
  const result = await h.run([...args, "--db", missing]);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /no database at .*a client_credentials client needs its integration user there first/);
  assert.equal(existsSync(join(h.dir, "typo")), false, "neither the file nor its directory");
  // An authorization_code client needs nothing in the database, so it may start one.
  const code = ["clients", "add", "--name", "Web", "--grant", "authorization_code", "--redirect-uri", "https://app.example/cb", "--scope", "fields:read"];
  assert.equal((await h.run([...code, "--db", missing])).code, 0);
});

test("the same commands run once the database exists (here created by users add)", async () => {
  const h = cliHarness();
  await setupOrg(h);
  assert.equal((await h.run(["users", "list"])).code, 0);
  assert.equal((await h.run(["fields", "import", "--org", "acme", h.file("f.geojson", squares(1))])).code, 0);
});

test("a --db symlink whose target is missing names no database either (exit 2, nothing created)", async () => {
  const h = cliHarness();
  const link = join(h.dir, "link.db");
  symlinkSync(join(h.dir, "missing", "target.db"), link);
  const result = await h.run(["users", "list", "--db", link]);
  assert.equal(result.code, 2, result.stderr);
  assert.equal(existsSync(join(h.dir, "missing")), false);
});
