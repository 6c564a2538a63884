// clients add / list / show / disable / rotate-secret through runCli.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import { cliHarness, setupOrg, squares, type CliHarness } from "./harness.ts";

async function addWebClient(h: CliHarness, redirectUri = "https://app.example/cb") {
  return h.json(["clients", "add", "--name", "Web", "--grant", "authorization_code", "--redirect-uri", redirectUri, "--scope", "fields:read"]);
}

async function addJobClient(h: CliHarness) {
  return h.json(["clients", "add", "--name", "Job", "--grant", "client_credentials", "--integration-user", "robot@example.com", "--scope", "fields:read"]);
}

test("clients add authorization_code prints the id and secret once and stores only the secret's digest", async () => {
  const h = cliHarness();
  const out = await addWebClient(h);
  assert.match(String(out.client_secret), /^fgcs_[A-Za-z0-9_-]{43}$/);
  assert.equal(out.grant_type, "authorization_code");
  assert.equal(out.redirect_uri, "https://app.example/cb");
  const [row] = h.query("SELECT * FROM clients WHERE client_id = ?", String(out.client_id));
  assert.equal(row!.secret_hash, await sha256Hex(String(out.client_secret)));
  assert.ok(!h.snapshot().includes(String(out.client_secret)));
  const shown = await h.json(["clients", "show", String(out.client_id)]);
  assert.equal(shown.client_secret, undefined);
});

for (const uri of ["http://127.0.0.1:9/cb", "http://[::1]:8000/callback", "http://localhost/cb", "https://app.example/cb?tenant=1"]) {
  test(`clients add accepts the redirect URI ${uri}`, async () => {
    const h = cliHarness();
    const out = await addWebClient(h, uri);
    assert.equal(out.redirect_uri, uri);
  });
}

test("clients add client_credentials links the integration user", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const out = await addJobClient(h);
  assert.equal(out.integration_user, "robot@example.com");
  assert.equal(out.redirect_uri, null);
  const [row] = h.query("SELECT u.username FROM clients c JOIN users u ON u.id = c.integration_user_id WHERE c.client_id = ?", String(out.client_id));
  assert.equal(row!.username, "robot@example.com");
});

test("clients add refuses an integration user that already has a client, with exit 1 and nothing written", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await addJobClient(h);
  const before = h.snapshot();
  const result = await h.run(["clients", "add", "--name", "Job 2", "--grant", "client_credentials", "--integration-user", "robot@example.com", "--scope", "fields:read"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /already belongs to another client/);
  assert.equal(result.stdout, "");
  assert.equal(h.snapshot(), before);
});

test("clients add normalises a repeated scope", async () => {
  const h = cliHarness();
  const out = await h.json(["clients", "add", "--name", "W", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read  fields:read"]);
  assert.equal(out.scope, "fields:read");
});

test("clients add without --json shows the secret with a warning to keep it safe", async () => {
  const h = cliHarness();
  const result = await h.run(["clients", "add", "--name", "W", "--grant", "authorization_code", "--redirect-uri", "https://a.example/cb", "--scope", "fields:read"]);
  assert.match(result.stdout, /client_secret: fgcs_/);
  assert.match(result.stdout, /shown only now/);
});

test("clients rotate-secret replaces the digest at once and keeps tokens unless asked", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const created = await addJobClient(h);
  const rotated = await h.json(["clients", "rotate-secret", String(created.client_id)]);
  assert.equal(rotated.client_id, created.client_id);
  assert.notEqual(rotated.client_secret, created.client_secret);
  const [row] = h.query("SELECT secret_hash, secret_rotated_at FROM clients WHERE client_id = ?", String(created.client_id));
  assert.equal(row!.secret_hash, await sha256Hex(String(rotated.client_secret)));
  assert.equal(row!.secret_rotated_at, h.clock.nowSeconds());
});

test("clients rotate-secret --revoke-tokens revokes the client's live tokens", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const created = await addJobClient(h);
  const store = openStore(h.dbPath);
  const client = (await store.clients.findByClientId(String(created.client_id)))!;
  const now = h.clock.nowSeconds();
  await store.tokens.issue({
    clientId: client.id,
    userId: client.integrationUserId!,
    familyId: null,
    tokens: [{ tokenHash: await sha256Hex("t"), kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: now, expiresAt: now + 1800 }],
  });
  await store.close();
  await h.json(["clients", "rotate-secret", String(created.client_id), "--revoke-tokens"]);
  assert.equal(h.query("SELECT revoked_at FROM tokens")[0]!.revoked_at, now);
});

test("clients list and show describe clients without secret digests", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const web = await addWebClient(h);
  const job = await addJobClient(h);
  const list = await h.json(["clients", "list"]);
  const clients = list.clients as Record<string, unknown>[];
  assert.deepEqual(clients.map((c) => c.client_id), [web.client_id, job.client_id]);
  const digests = h.query("SELECT secret_hash FROM clients").map((r) => String(r.secret_hash));
  const text = (await h.run(["clients", "list"])).stdout + (await h.run(["clients", "show", String(job.client_id)])).stdout;
  for (const output of [JSON.stringify(list), text]) {
    for (const digest of digests) assert.ok(!output.includes(digest));
    assert.ok(!output.includes("secret_hash"));
  }
  assert.match(text, /integration_user\s+robot@example.com/);
  // Times read as dates in the text form; the JSON keeps epoch seconds.
  assert.match(text, /created_at\s+\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z/);
  assert.equal(typeof clients[0]!.created_at, "number");
});

test("clients disable marks the client disabled", async () => {
  const h = cliHarness();
  const web = await addWebClient(h);
  const out = await h.json(["clients", "disable", String(web.client_id)]);
  assert.deepEqual(out, { client_id: web.client_id, disabled: true });
  assert.equal((await h.json(["clients", "show", String(web.client_id)])).disabled, true);
  assert.match((await h.run(["clients", "list"])).stdout, /\(disabled\)/);
  assert.deepEqual(h.query("SELECT event, client_id FROM audit_events WHERE event = 'client_disabled'").map((r) => ({ ...r })), [
    { event: "client_disabled", client_id: web.client_id },
  ]);
});

test("clients set-redirect-uri points the client at a new callback, validated like registration", async () => {
  const h = cliHarness();
  const web = await addWebClient(h);
  const id = String(web.client_id);
  const out = await h.json(["clients", "set-redirect-uri", id, "https://new.example/callback"]);
  assert.deepEqual(out, { client_id: id, redirect_uri: "https://new.example/callback", previous_redirect_uri: web.redirect_uri });
  assert.equal((await h.json(["clients", "show", id])).redirect_uri, "https://new.example/callback");
  const [event] = h.query("SELECT client_id, detail FROM audit_events WHERE event = 'redirect_uri_changed'");
  assert.deepEqual(JSON.parse(String(event!.detail)), { from: web.redirect_uri, to: "https://new.example/callback" });
  const before = h.snapshot();
  for (const [args, message] of [
    [["clients", "set-redirect-uri", id, "http://evil.example/cb"], /URI must use https/],
    [["clients", "set-redirect-uri", id, "https://new.example/cb#frag"], /URI must not contain a fragment/],
    [["clients", "set-redirect-uri", "no-such-client", "https://new.example/cb"], /no client with client_id/],
    [["clients", "set-redirect-uri", id], /CLIENT_ID URI/],
  ] as const) {
    const result = await h.run([...args]);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
  assert.equal(h.snapshot(), before, "a refused change writes nothing");
});

test("clients set-redirect-uri refuses a client-credentials client with exit 1 (it exists, but has no redirect URI)", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const job = await h.json(["clients", "add", "--name", "job", "--grant", "client_credentials", "--integration-user", "robot@example.com", "--scope", "fields:read"]);
  const before = h.snapshot();
  const result = await h.run(["clients", "set-redirect-uri", String(job.client_id), "https://a.example/cb"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /is a client_credentials client: it has no redirect URI/);
  assert.equal(h.snapshot(), before);
});

test("clients enable undoes a disable: the client authenticates again", async () => {
  const h = cliHarness();
  const web = await addWebClient(h);
  await h.json(["clients", "disable", String(web.client_id)]);
  const out = await h.json(["clients", "enable", String(web.client_id)]);
  assert.deepEqual(out, { client_id: web.client_id, disabled: false });
  const store = openStore(h.dbPath);
  try {
    assert.equal((await store.clients.findByClientId(String(web.client_id)))?.disabled, false);
  } finally {
    await store.close();
  }
  assert.deepEqual(h.query("SELECT event FROM audit_events WHERE event LIKE 'client_%abled' ORDER BY id").map((r) => r.event), [
    "client_disabled", "client_enabled",
  ]);
  assert.equal((await h.run(["clients", "enable", "no-such-client"])).code, 2);
});

test("clients rotate-secret is recorded in the audit log without the secret", async () => {
  const h = cliHarness();
  const web = await addWebClient(h);
  const rotated = await h.json(["clients", "rotate-secret", String(web.client_id)]);
  const rows = h.query("SELECT event, client_id, detail FROM audit_events WHERE event = 'secret_rotated'").map((r) => ({ ...r }));
  assert.deepEqual(rows, [{ event: "secret_rotated", client_id: web.client_id, detail: '{"tokens_revoked":false}' }]);
  assert.ok(!JSON.stringify(h.log).includes(String(rotated.client_secret)));
});

test("clients list on an empty database says so", async () => {
  const h = cliHarness();
  h.createDatabase();
  assert.equal((await h.run(["clients", "list"])).stdout, "No clients.\n");
});

test("client ids never start with '-', so they can be passed as command-line arguments", async () => {
  const { createClient } = await import("../../src/oauth/registration.ts");
  const store = await openStore(":memory:");
  try {
    // 0xF8 makes the first base64url character '-' (its top six bits are 62).
    const random = (n: number) => new Uint8Array(n).fill(0xf8);
    const { client } = await createClient(store, { name: "x", grantType: "authorization_code", redirectUris: ["https://x.example/cb"], scope: "fields:read", integrationUserId: null }, { random, now: 1 });
    assert.doesNotMatch(client.clientId, /^-/);
    assert.equal(client.clientId.length, 22);
  } finally {
    await store.close();
  }
});

test("creating users and clients and importing fields leaves an audit trail, with no secret in it", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const client = await addJobClient(h);
  await h.json(["fields", "import", "--org", "acme", h.file("a.geojson", squares(2))]);
  await h.json(["fields", "import", "--org", "acme", "--replace", h.file("b.geojson", squares(1))]);
  const rows = h.query("SELECT event, client_id, user_id, detail FROM audit_events ORDER BY id")
    .filter((r) => ["user_created", "client_created", "fields_imported"].includes(String(r.event)));
  const [robot] = h.query("SELECT id FROM users WHERE username = 'robot@example.com'");
  const created = rows.filter((r) => r.event === "user_created");
  assert.ok(created.some((r) => r.user_id === robot!.id && JSON.parse(String(r.detail)).kind === "integration"));
  const registered = rows.find((r) => r.event === "client_created")!;
  assert.equal(registered.client_id, client.client_id);
  assert.equal(registered.user_id, robot!.id);
  assert.deepEqual(JSON.parse(String(registered.detail)), { grant_type: "client_credentials", scope: "fields:read" });
  assert.deepEqual(rows.filter((r) => r.event === "fields_imported").map((r) => JSON.parse(String(r.detail))), [
    { organization: "acme", imported: 2, replaced: 0 },
    { organization: "acme", imported: 1, replaced: 2 },
  ]);
  assert.ok(!JSON.stringify(h.query("SELECT * FROM audit_events")).includes(String(client.client_secret)));
});

test("clients delete removes the client with its tokens and users' approvals; its integration user stays", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const web = await addWebClient(h);
  const job = await addJobClient(h);
  const store = openStore(h.dbPath);
  const alice = (await store.users.findByUsername("alice@example.com"))!;
  const jobRow = (await store.clients.findByClientId(String(job.client_id)))!;
  const webRow = (await store.clients.findByClientId(String(web.client_id)))!;
  const now = h.clock.nowSeconds();
  const token = (name: string, expiresAt: number) =>
    ({ tokenHash: name.padEnd(64, "0"), kind: "access" as const, grantType: "client_credentials" as const, scope: "fields:read", issuedAt: now, expiresAt });
  await store.tokens.issue({ clientId: jobRow.id, userId: jobRow.integrationUserId!, familyId: null, tokens: [token("a", now + 1800), token("b", now - 1)] });
  await store.consents.grant(alice.id, webRow.id, { scope: "fields:read", now });
  await store.close();

  const out = await h.json(["clients", "delete", String(job.client_id)]);
  assert.deepEqual(out, { client_id: job.client_id, deleted: true, tokens_revoked: 1, consents_removed: 0, integration_user: "robot@example.com" });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens")[0]!.n, 0, "live and expired tokens go with it");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM clients WHERE client_id = ?", String(job.client_id))[0]!.n, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users WHERE username = 'robot@example.com'")[0]!.n, 1);
  // Now no client acts as the integration user, users delete can erase it.
  assert.equal((await h.json(["users", "delete", "robot@example.com"])).deleted, true);

  const text = await h.run(["clients", "delete", String(web.client_id)]);
  assert.equal(text.stdout, `Deleted client ${web.client_id} ("Web"): 0 live tokens revoked, 1 approval removed.\n`);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM consents")[0]!.n, 0);
  const events = h.query("SELECT client_id, detail FROM audit_events WHERE event = 'client_deleted' ORDER BY id");
  assert.deepEqual(events.map((e) => e.client_id), [job.client_id, web.client_id]);
  const again = await h.run(["clients", "delete", String(web.client_id)]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /no client with client_id/);
});

test("clients add registers every --redirect-uri given, in order", async () => {
  const h = cliHarness();
  const out = await h.json(["clients", "add", "--name", "Web", "--grant", "authorization_code", "--redirect-uri",
    "https://app.example/cb", "--redirect-uri=https://app.example/cb2", "--scope", "fields:read"]);
  assert.equal(out.redirect_uri, "https://app.example/cb");
  assert.deepEqual(out.redirect_uris, ["https://app.example/cb", "https://app.example/cb2"]);
  const shown = await h.json(["clients", "show", String(out.client_id)]);
  assert.deepEqual(shown.redirect_uris, ["https://app.example/cb", "https://app.example/cb2"]);
});

for (const row of [
  { name: "the same URI twice", uris: ["https://app.example/cb", "https://app.example/cb"], error: /same URI twice/ },
  { name: "a bad second URI", uris: ["https://app.example/cb", "http://app.example/cb"], error: /must use https/ },
]) {
  test(`clients add refuses ${row.name} with exit 2 and nothing written`, async () => {
    const h = cliHarness();
    const args = row.uris.flatMap((uri) => ["--redirect-uri", uri]);
    const result = await h.run(["clients", "add", "--name", "Web", "--grant", "authorization_code", ...args, "--scope", "fields:read"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, row.error);
    assert.equal(h.snapshot(), "absent");
  });
}

test("clients add --require-dpop registers a client whose token requests need a proof; require-dpop and allow-bearer change it, list and show say so", async () => {
  const h = cliHarness();
  const added = await h.json(["clients", "add", "--name", "spa", "--grant", "authorization_code", "--redirect-uri",
    "https://a.example/cb", "--scope", "fields:read", "--require-dpop"]);
  assert.equal(added.require_dpop, true);
  const id = String(added.client_id);
  assert.match((await h.run(["clients", "list"])).stdout, /dpop=required/);
  assert.deepEqual(await h.json(["clients", "allow-bearer", id]), { client_id: id, require_dpop: false });
  assert.equal((await h.json(["clients", "show", id])).require_dpop, false);
  assert.doesNotMatch((await h.run(["clients", "list"])).stdout, /dpop=required/);
  assert.deepEqual(await h.json(["clients", "require-dpop", id]), { client_id: id, require_dpop: true });
  assert.equal((await h.json(["clients", "show", id])).require_dpop, true);
  assert.deepEqual(h.query("SELECT detail FROM audit_events WHERE event = 'client_dpop_changed' ORDER BY id").map((r) => r.detail), [
    '{"require_dpop":false}', '{"require_dpop":true}',
  ]);
  assert.equal((await h.run(["clients", "require-dpop", "no-such-client"])).code, 2);
});
