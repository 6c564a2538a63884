// import doorkeeper through runCli: what is imported, skipped and refused, dry runs, re-runs, all or nothing.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cliHarness, type CliHarness } from "./harness.ts";
import {
  applicationsCsv, integrationUsersCsv, ownersCsv, PLAIN, SYNC_UID, tokensCsv, WEB_REDIRECTS, WEB_UID,
} from "../helpers/doorkeeper_fixtures.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function files(h: CliHarness, hashed = false) {
  return [
    "--applications", h.file("oauth_applications.csv", applicationsCsv(hashed)),
    "--integration-users", h.file("integration.csv", integrationUsersCsv()),
    "--owners", h.file("owners.csv", ownersCsv()),
    "--tokens", h.file("oauth_access_tokens.csv", tokensCsv(hashed)),
  ];
}

interface Report {
  dry_run: boolean;
  applications: { imported: number; skipped: number; refused: number };
  integration_users: { imported: number; skipped: number; refused: number };
  owners: { imported: number; skipped: number; refused: number };
  tokens: { imported: number; skipped: number; removed_since: number; refused: number; not_usable: { revoked: number; expired: number } };
  consents: number;
  refusals: { kind: string; line: number; id: string; reason: string }[];
  repeated_refreshes: { client_id: string; tokens: number }[];
}

const reasonFor = (report: Report, kind: string, id: string) => report.refusals.find((r) => r.kind === kind && r.id === id)?.reason;

test("a dry run reports every import and refusal with its reason and writes nothing", async () => {
  const h = cliHarness();
  h.createDatabase();
  const before = h.snapshot();
  const report = await h.json(["import", "doorkeeper", ...files(h), "--dry-run"]) as unknown as Report;
  assert.equal(h.snapshot(), before);
  assert.equal(report.dry_run, true);
  assert.deepEqual(report.applications, { imported: 2, skipped: 0, removed_since: 0, refused: 4 });
  assert.match(reasonFor(report, "application", "dk-public-uid-0003") ?? "", /public application/);
  assert.match(reasonFor(report, "application", "dk-bcrypt-uid-0004") ?? "", /bcrypt.*rotate/);
  assert.match(reasonFor(report, "application", "dk-admin-uid-0005") ?? "", /unknown scope admin/);
  assert.match(reasonFor(report, "application", "dk-oob-uid-0006") ?? "", /urn:ietf:wg:oauth:2\.0:oob.*--integration-users/);
  assert.deepEqual(report.owners, { imported: 3, skipped: 0, removed_since: 0, refused: 0 });
  assert.match(reasonFor(report, "token", "104") ?? "", /no mapping/);
  // alice: access and refresh; bob's pair: the newer access token and both refresh tokens; the sync token.
  assert.deepEqual(report.tokens, { imported: 6, skipped: 4, removed_since: 0, refused: 1, not_usable: { revoked: 3, expired: 1 } });
  assert.equal(report.consents, 2);
  assert.deepEqual(report.repeated_refreshes, [{ client_id: WEB_UID, tokens: 1 }]);
  const text = await h.run(["import", "doorkeeper", ...files(h), "--dry-run"]);
  assert.match(text.stdout, /^Dry run: nothing was written/);
  assert.match(text.stdout, /warning: client dk-web-uid-0001: 1 refresh token\(s\) were refreshed more than once/);
});

test("a dry run against a missing database is refused without creating it", async () => {
  const h = cliHarness();
  const result = await h.run(["import", "doorkeeper", ...files(h), "--dry-run"]);
  assert.equal(result.code, 2);
  assert.equal(h.snapshot(), "absent");
});

test("the import stores clients, people, tokens and consents in fieldgate's hashed forms, with one audit event", async () => {
  const h = cliHarness();
  const report = await h.json(["import", "doorkeeper", ...files(h)]) as unknown as Report;
  assert.equal(report.dry_run, false);
  assert.equal(report.tokens.imported, 6);
  const [web] = h.query("SELECT * FROM clients WHERE client_id = ?", WEB_UID);
  assert.equal(web!.secret_hash, sha256(PLAIN.webSecret));
  assert.equal(web!.grant_type, "authorization_code");
  assert.equal(web!.name, 'Notes, "beta"');
  assert.equal(web!.redirect_uri, WEB_REDIRECTS.join("\n"));
  const [sync] = h.query("SELECT c.*, u.username, u.kind FROM clients c JOIN users u ON u.id = c.integration_user_id WHERE client_id = ?", SYNC_UID);
  assert.equal(sync!.grant_type, "client_credentials");
  assert.equal(sync!.secret_hash, sha256(PLAIN.syncSecret));
  assert.equal(sync!.username, "sync-robot@example.com");
  assert.equal(sync!.kind, "integration");
  assert.equal(sync!.scope, "fields:read");
  const [alice] = h.query("SELECT password_hash, name FROM users WHERE username = 'alice@example.com'");
  assert.match(String(alice!.password_hash), /^\$2b\$12\$/);
  assert.equal(h.query("SELECT password_hash FROM users WHERE username = 'carol@example.com'")[0]!.password_hash, null);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?", sha256(PLAIN.aliceRefresh))[0]!.n, 1);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?", sha256(PLAIN.aliceRevokedRefresh))[0]!.n, 0);
  const families = h.query("SELECT DISTINCT family_id FROM tokens WHERE token_hash IN (?, ?)", sha256(PLAIN.bobRefreshA), sha256(PLAIN.bobRefreshB));
  assert.equal(families.length, 1, "a rotated pair shares one family");
  const audit = h.query("SELECT * FROM audit_events WHERE event = 'doorkeeper_imported'");
  assert.equal(audit.length, 1);
  assert.deepEqual(JSON.parse(String(audit[0]!.detail)).tokens, { imported: 6, skipped: 4, removed_since: 0, refused: 1 });
  assert.ok(h.log.some((l) => l.event === "audit.doorkeeper_imported"));
});

test("SHA-256 secret and token columns (hash_application_secrets, hash_token_secrets) import as they are", async () => {
  const h = cliHarness();
  await h.json(["import", "doorkeeper", ...files(h, true)]);
  assert.equal(h.query("SELECT secret_hash FROM clients WHERE client_id = ?", WEB_UID)[0]!.secret_hash, sha256(PLAIN.webSecret));
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?", sha256(PLAIN.aliceAccess))[0]!.n, 1);
});

test("running the import again imports nothing new", async () => {
  const h = cliHarness();
  await h.json(["import", "doorkeeper", ...files(h)]);
  const tokens = h.query("SELECT COUNT(*) AS n FROM tokens")[0]!.n;
  const again = await h.json(["import", "doorkeeper", ...files(h)]) as unknown as Report;
  assert.deepEqual(again.applications, { imported: 0, skipped: 2, removed_since: 0, refused: 4 });
  assert.deepEqual(again.integration_users, { imported: 0, skipped: 0, removed_since: 0, refused: 0 });
  assert.deepEqual(again.owners, { imported: 0, skipped: 3, removed_since: 0, refused: 0 });
  assert.equal(again.tokens.imported, 0);
  assert.equal(again.consents, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens")[0]!.n, tokens);
});

for (const row of [
  { name: "a tokens file with an unclosed quote", file: "tokens", text: 'id,resource_owner_id,application_id,token,refresh_token,expires_in,revoked_at,created_at,scopes\n1,"10\n', error: /line 2: a quoted field is never closed; nothing imported/ },
  { name: "an owners file without the username column", file: "owners", text: "resource_owner_id,organization\n10,acme\n", error: /lacks the column username/ },
  { name: "an applications file that does not exist", file: "applications", text: undefined, error: /cannot read/ },
]) {
  test(`import doorkeeper refuses ${row.name} with exit 2 and writes nothing`, async () => {
    const h = cliHarness();
    h.createDatabase();
    const before = h.snapshot();
    const args = files(h);
    const at = args.indexOf(`--${row.file}`) + 1;
    args[at] = row.text === undefined ? `${h.dir}/missing.csv` : h.file(`bad_${row.file}.csv`, row.text);
    const result = await h.run(["import", "doorkeeper", ...args]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, row.error);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    assert.equal(h.snapshot(), before);
  });
}

test("import doorkeeper needs --applications, and --owners with --tokens", async () => {
  const h = cliHarness();
  const none = await h.run(["import", "doorkeeper"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--applications is required/);
  const tokensOnly = await h.run(["import", "doorkeeper", "--applications", h.file("a.csv", applicationsCsv()), "--tokens", h.file("t.csv", tokensCsv())]);
  assert.equal(tokensOnly.code, 2);
  assert.match(tokensOnly.stderr, /--tokens needs --owners/);
});

test("an integration user name that belongs to a person refuses that application and nothing else", async () => {
  const h = cliHarness();
  const person = await h.run(["users", "add", "--username", "sync-robot@example.com", "--password-stdin", "--org", "acme"], { stdin: "correct horse battery\n" });
  assert.equal(person.code, 0);
  const report = await h.json(["import", "doorkeeper", ...files(h)]) as unknown as Report;
  assert.match(reasonFor(report, "integration_user", SYNC_UID) ?? "", /is a person/);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM clients WHERE client_id = ?", SYNC_UID)[0]!.n, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM clients WHERE client_id = ?", WEB_UID)[0]!.n, 1);
  assert.match(reasonFor(report, "token", "105") ?? "", /application was not imported/);
});

test("tokens of an application refused as a repeated uid are refused with it, not attached to the first one", async () => {
  const h = cliHarness();
  const apps = applicationsCsv().trimEnd().split("\n");
  // Row 7 repeats the web application's uid under its own id 7; its token (row 200) names application 7.
  const duplicate = `7,Copy,${WEB_UID},another-secret,https://copy.example/cb,fields:read,1,2024-03-07 10:00:00,2024-03-07 10:00:00`;
  const tokens = tokensCsv().trimEnd() + "\n200,10,7,dk-at-copy-0123456789abcdefghijklm,dk-rt-copy-0123456789abcdefghijklm,7200,,2025-12-31 23:30:00,fields:read,\n";
  const report = await h.json(["import", "doorkeeper", ...files(h).slice(2, 6),
    "--applications", h.file("apps_dup.csv", [...apps, duplicate].join("\n") + "\n"),
    "--tokens", h.file("tokens_dup.csv", tokens)]) as unknown as Report;
  assert.match(reasonFor(report, "application", WEB_UID) ?? "", /listed twice/);
  assert.match(reasonFor(report, "token", "200") ?? "", /application was refused/);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?", sha256("dk-rt-copy-0123456789abcdefghijklm"))[0]!.n, 0);
  assert.equal(report.tokens.imported, 6, "the first application's own tokens are imported as before");
});

test("running the import again after users delete, clients delete and users leave brings none of it back", async () => {
  const h = cliHarness();
  await h.json(["import", "doorkeeper", ...files(h)]);
  for (const args of [["users", "delete", "bob@example.com"], ["clients", "delete", SYNC_UID], ["users", "leave", "carol@example.com", "--org", "beta"]]) {
    const done = await h.run(args);
    assert.equal(done.code, 0, done.stderr);
  }
  const again = await h.json(["import", "doorkeeper", ...files(h)]) as unknown as Report;
  assert.deepEqual(again.applications, { imported: 0, skipped: 1, removed_since: 1, refused: 4 });
  assert.deepEqual(again.owners, { imported: 0, skipped: 2, removed_since: 1, refused: 0 });
  assert.equal(again.tokens.imported, 0);
  assert.equal(again.tokens.removed_since, 4, "bob's three and the sync client's one");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM clients WHERE client_id = ?", SYNC_UID)[0]!.n, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users WHERE username = 'bob@example.com'")[0]!.n, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?", sha256(PLAIN.bobRefreshB))[0]!.n, 0);
  const carol = "SELECT COUNT(*) AS n FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.username = 'carol@example.com'";
  assert.equal(h.query(carol)[0]!.n, 0);
  const text = await h.run(["import", "doorkeeper", ...files(h), "--dry-run"]);
  assert.match(text.stdout, /applications +0 to import, 1 skipped, 1 removed since \(not restored\), 4 refused/);
});
