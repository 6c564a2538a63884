// `copy-store`: a SQLite installation copied into PostgreSQL row for row, the identity sequences moved past the copied
// ids, and the refusals (a non-empty target, a source at another schema version, bad arguments) that write nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { openPostgres, type PgClient } from "../../src/store/postgres/connect.ts";
import { test } from "../helpers/bounded.ts";
import { authCodeTokens, clientCredentialsToken, issueCode, makeVerifier, refreshBody } from "../helpers/codes.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { postJson } from "../helpers/requests.ts";
import { buildTestApp } from "../helpers/test_app.ts";
import { cliHarness, type CliHarness } from "./harness.ts";

/**
 * A SQLite installation with a row in every table, built through the app and the store as a running service would:
 * people and an integration user in two organizations, a client with several redirect URIs, a used and an unused
 * (PKCE) code, a grant family whose refresh token was rotated, a client-credentials token, a session, a consent,
 * fields with and without crop and season, audit events, a demo state, a server secret and a user tombstone. The
 * newest field is deleted afterwards, so SQLite's AUTOINCREMENT remembers an id above every row's.
 */
async function buildInstallation(path: string): Promise<void> {
  const t = buildTestApp({ FIELDGATE_DB: path });
  try {
    const now = t.clock.nowSeconds();
    const { client: web, tokens } = await authCodeTokens(t);
    const refreshed = await t.app.fetch(postJson("/oauth/token", refreshBody(web, tokens.refresh_token)));
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    await clientCredentialsToken(t);
    const several = await t.seed.client({
      org: "beta",
      redirectUris: ["https://a.example/cb", "https://b.example/cb?x=1", "http://127.0.0.1:7000/cb"],
    });
    await issueCode(t, several, { verifier: makeVerifier() });
    const person = await t.seed.user({ username: "Émile.Ünal@example.com", org: "beta" });
    const acme = (await t.store.organizations.findBySlug("acme"))!;
    await t.store.organizations.addMember(acme.id, person.id, { role: "admin", now });
    await t.store.sessions.insert({ sessionHash: await sha256Hex("session"), userId: person.id, createdAt: now, expiresAt: now + 3_600 });
    await t.store.consents.grant(person.id, several.client.id, { scope: "fields:read", now });
    await t.seed.fields(4, { org: "acme" });
    await t.seed.fields(3, { org: "beta", crop: "barley", season: "2025" });
    const beta = (await t.store.organizations.findBySlug("beta"))!;
    await t.store.fields.insertMany(beta.id, [{
      name: "Unplanted «corner»",
      areaHa: 0.123456789012345,
      crop: null,
      season: null,
      boundary: JSON.stringify({ type: "Polygon", coordinates: [[[6, 51], [6.001, 51], [6.001, 51.001], [6, 51]]] }),
      centroid: { lon: 6.000333333333333, lat: 51.00033333333333 },
    }], { now });
    await t.store.audit.insert({ at: now, event: "test_event", clientId: web.clientId, userId: person.id, ip: "203.0.113.9", detail: { note: "ä\nb" } });
    await t.store.demoStates.save({ keyHash: await sha256Hex("demo"), sealed: "sealed-state", expiresAt: now + 600 }, { keep: 10 });
    await t.store.secrets.ensure("copy-test-secret", "s3cret-value", now);
    await t.store.throttles.rememberProof(await sha256Hex("proof"), now + 60);
    await t.store.imports.apply({
      clients: [{
        line: 2, clientId: "dk-copied", secretHash: "a".repeat(64), name: "Imported", grantType: "authorization_code",
        redirectUris: ["https://dk.example/cb"], scope: "fields:read", integrationUser: null,
      }],
      owners: [],
      grants: [],
      now,
      dryRun: false,
      audit: () => ({ at: now, event: "doorkeeper_imported", clientId: null, userId: null, ip: null, detail: null }),
    });
    const leaving = await t.seed.user({ username: "leaving@example.com", org: "beta" });
    await t.store.users.erase(leaving.id, now);
  } finally {
    await t.store.close();
  }
  const raw = new DatabaseSync(path);
  try {
    raw.exec("DELETE FROM fields WHERE id = (SELECT MAX(id) FROM fields)");
  } finally {
    raw.close();
  }
}

/** Runs copy-store; FIELDGATE_DB keeps the harness from adding the --db that copy-store refuses. */
function copyStore(h: CliHarness, args: string[]) {
  return h.run(["copy-store", ...args], { env: { FIELDGATE_DB: h.dbPath } });
}

type Dump = Record<string, unknown[][]>;

/** Every table's columns, from PostgreSQL's catalog: the list both databases are dumped by. */
async function tableColumns(pg: PgClient): Promise<Map<string, string[]>> {
  const rows = await pg.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name, c.ordinal_position`,
  );
  const columns = new Map<string, string[]>();
  for (const row of rows) {
    // When a step was applied differs by database; which steps were is compared.
    if (row.table_name === "schema_migrations" && row.column_name === "applied_at") continue;
    columns.set(row.table_name, [...(columns.get(row.table_name) ?? []), row.column_name]);
  }
  return columns;
}

/** Rows as value arrays in a stable order (sorted by their JSON), so two databases' dumps compare whole. */
function sorted(rows: unknown[][]): unknown[][] {
  return rows.map((row) => [JSON.stringify(row), row] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}

function select(table: string, columns: readonly string[]): string {
  return `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"`;
}

async function dumpPostgres(pg: PgClient, columns: Map<string, string[]>): Promise<Dump> {
  const dump: Dump = {};
  for (const [table, names] of columns) {
    const rows = await pg.query(select(table, names));
    dump[table] = sorted(rows.map((row) => names.map((name) => row[name])));
  }
  return dump;
}

function dumpSqlite(path: string, columns: Map<string, string[]>): Dump {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const dump: Dump = {};
    for (const [table, names] of columns) {
      const rows = db.prepare(select(table, names)).all() as Record<string, unknown>[];
      dump[table] = sorted(rows.map((row) => names.map((name) => row[name])));
    }
    return dump;
  } finally {
    db.close();
  }
}

/**
 * One new row per identity table, as the store would add it after the move; each statement returns the new id. The
 * keys must be every identity table of the schema (checked), so a table added later cannot go untested.
 */
const NEW_ROWS: Record<string, string> = {
  organizations: "INSERT INTO organizations (slug, name, created_at) VALUES ('after-copy', 'After', 0) RETURNING id",
  users: "INSERT INTO users (username, kind, created_at) VALUES ('after-copy', 'integration', 0) RETURNING id",
  clients: `INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri, scope, created_at)
    VALUES ('after-copy', 'x', 'After', 'authorization_code', 'https://after.example/cb', 'fields:read', 0) RETURNING id`,
  authorization_codes: `INSERT INTO authorization_codes (code_hash, family_id, client_id, user_id, redirect_uri, scope,
    issued_at, expires_at) SELECT 'after-copy', id, client_id, user_id, 'https://after.example/cb', scope, 0, 1
    FROM grant_families ORDER BY id LIMIT 1 RETURNING id`,
  tokens: `INSERT INTO tokens (token_hash, kind, grant_type, client_id, user_id, scope, issued_at, expires_at)
    SELECT 'after-copy', 'access', 'client_credentials', id, integration_user_id, scope, 0, 1
    FROM clients WHERE integration_user_id IS NOT NULL ORDER BY id LIMIT 1 RETURNING id`,
  sessions: "INSERT INTO sessions (session_hash, user_id, created_at, expires_at) SELECT 'after-copy', MIN(id), 0, 1 FROM users RETURNING id",
  fields: `INSERT INTO fields (organization_id, name, area_ha, boundary, centroid_lon, centroid_lat, created_at, updated_at)
    SELECT MIN(id), 'after', 1, '{}', 0, 0, 0, 0 FROM organizations RETURNING id`,
  audit_events: "INSERT INTO audit_events (at, event) VALUES (0, 'after_copy') RETURNING id",
};

/** The highest id SQLite handed out per table: the largest row's, or AUTOINCREMENT's mark when higher. */
function highestSqliteIds(path: string, tables: readonly string[]): Record<string, number> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const marks = new Map(db.prepare("SELECT name, seq FROM sqlite_sequence").all().map((r) => [r.name, Number(r.seq)]));
    return Object.fromEntries(tables.map((table) => {
      const max = Number(db.prepare(`SELECT COALESCE(MAX(id), 0) AS m FROM "${table}"`).get()!.m);
      return [table, Math.max(max, marks.get(table) ?? 0)];
    }));
  } finally {
    db.close();
  }
}

postgresTest("copy-store copies every row of every table, and new rows get ids above the copied ones", async ({ url }) => {
  const h = cliHarness();
  const source = join(h.dir, "source.db");
  await buildInstallation(source);
  const result = await copyStore(h, ["--from", source, "--to", url, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { rows: Record<string, number>; to: string };
  const pg = await openPostgres(url, { max: 1 });
  try {
    const columns = await tableColumns(pg);
    const copied = await dumpPostgres(pg, columns);
    const original = dumpSqlite(source, columns);
    assert.deepEqual(Object.keys(copied).sort(), Object.keys(original).sort());
    for (const table of columns.keys()) {
      // Failure counts are not moved: the window they count ends with the stop the move needs.
      if (table === "throttle_counters") {
        assert.deepEqual(copied[table], [], "no throttle counters are copied");
        continue;
      }
      // Nor are seen DPoP proofs, which live for one window too.
      if (table === "dpop_proofs") {
        assert.equal(original[table]!.length, 1, "the fixture has a seen proof");
        assert.deepEqual(copied[table], [], "no seen DPoP proof is copied");
        continue;
      }
      assert.deepEqual(copied[table], original[table], `table ${table}`);
      if (table !== "schema_migrations") {
        assert.ok(original[table]!.length > 0, `the fixture has rows in ${table}`);
        assert.equal(report.rows[table], original[table]!.length, `reported count of ${table}`);
      }
    }
    const identities = await pg.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'",
    );
    assert.deepEqual(identities.map((r) => r.table_name).sort(), Object.keys(NEW_ROWS).sort());
    const highest = highestSqliteIds(source, Object.keys(NEW_ROWS));
    assert.ok(highest.fields! > Math.max(...original.fields!.map((row) => Number(row[0]))), "a deleted field's id is above the rest");
    for (const [table, sql] of Object.entries(NEW_ROWS)) {
      const [row] = await pg.query<{ id: number }>(sql);
      assert.equal(row!.id, highest[table]! + 1, `next id of ${table}`);
    }
  } finally {
    await pg.close();
  }
});

postgresTest("copy-store refuses a target that already holds rows, with exit 2, and changes nothing", async ({ url }) => {
  const h = cliHarness();
  const source = join(h.dir, "source.db");
  await buildInstallation(source);
  const withPassword = new URL(url);
  withPassword.password = "s3cret";
  assert.equal((await copyStore(h, ["--from", source, "--to", url])).code, 0);
  const pg = await openPostgres(url, { max: 1 });
  try {
    const columns = await tableColumns(pg);
    const before = await dumpPostgres(pg, columns);
    const again = await copyStore(h, ["--from", source, "--to", withPassword.href]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /is not empty \(rows in [a-z_, ]*\borganizations\b[a-z_, ]*\); copy-store fills an empty database only/);
    assert.ok(!again.stderr.includes("s3cret"), "the password is not shown");
    assert.deepEqual(await dumpPostgres(pg, columns), before);
    const [next] = await pg.query<{ id: number }>(NEW_ROWS.audit_events!);
    const copiedAudit = before.audit_events!.map((row) => Number(row[0]));
    assert.equal(next!.id, Math.max(...copiedAudit) + 1, "the refused copy moved no sequence either");
  } finally {
    await pg.close();
  }
});

postgresTest("copy-store refuses a SQLite file at an older schema version and touches neither database", async ({ url }) => {
  const h = cliHarness();
  h.createDatabase();
  const raw = new DatabaseSync(h.dbPath);
  raw.exec("DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)");
  raw.close();
  const file = h.snapshot();
  const result = await copyStore(h, ["--from", h.dbPath, "--to", url]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /is at schema version \d+, this fieldgate at \d+: back it up and run `fieldgate migrate --db /);
  assert.equal(h.snapshot(), file);
  const pg = await openPostgres(url, { max: 1 });
  try {
    assert.deepEqual(await pg.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"), []);
  } finally {
    await pg.close();
  }
});

const REFUSED_ARGUMENTS = [
  { name: "without --to", args: ["--from", "x.db"], error: /--to is required/ },
  { name: "without --from", args: ["--to", "postgres://127.0.0.1/x"], error: /--from is required/ },
  { name: "a --to that is not a PostgreSQL URL", args: ["--from", "x.db", "--to", "y.db"], error: /--to must be a postgres:\/\// },
  { name: "a --from that is a URL", args: ["--from", "postgres://127.0.0.1/a", "--to", "postgres://127.0.0.1/b"], error: /--from names the SQLite file/ },
  { name: "--db", args: ["--from", "x.db", "--to", "postgres://127.0.0.1/x", "--db", "z.db"], error: /not --db/ },
  { name: "a missing --from file", args: ["--from", "missing.db", "--to", "postgres://127.0.0.1:1/x"], error: /no database at missing\.db/ },
];

for (const row of REFUSED_ARGUMENTS) {
  test(`copy-store refuses ${row.name} with exit 2, creating nothing`, async () => {
    const h = cliHarness();
    const result = await copyStore(h, [...row.args]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, row.error);
    assert.equal(h.snapshot(), "absent");
  });
}

test("copy-store refuses a SQLite file that is not fieldgate's with exit 1", async () => {
  const h = cliHarness();
  const foreign = join(h.dir, "other.db");
  const raw = new DatabaseSync(foreign);
  raw.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
  raw.close();
  const result = await copyStore(h, ["--from", foreign, "--to", "postgres://127.0.0.1:1/x"]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /is not a fieldgate database/);
});

test("copy-store is listed in the help with both of its flags", async () => {
  const h = cliHarness();
  const overview = await h.run(["--help"]);
  assert.match(overview.stdout, /copy-store +copy a SQLite database/);
  const help = await copyStore(h, ["--help"]);
  assert.match(help.stdout, /--from PATH/);
  assert.match(help.stdout, /--to URL/);
});
