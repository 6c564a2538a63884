import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { ACCESS_TOKEN_TTL_SECONDS, loadConfig } from "../src/config.ts";

test("defaults give the spec's lifetimes and a safe local server", () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.baseUrl, "http://localhost:8080");
  assert.equal(config.dbPath, "data/fieldgate.db");
  assert.equal(config.codeTtlSeconds, 60);
  assert.equal(config.refreshGraceSeconds, 0);
  assert.equal(config.pbkdf2Iterations, 600_000);
  assert.equal(config.maxBodyBytes, 65_536);
  assert.equal(config.metricsToken, undefined);
  assert.deepEqual(config.corsOrigins, []);
  assert.equal(config.graphql.maxBoundaryBytes, 4_194_304);
  assert.deepEqual(ACCESS_TOKEN_TTL_SECONDS, { authorization_code: 28_800, refresh_token: 28_800, client_credentials: 1_800 });
});

test("config is frozen, nested limits included", () => {
  const config = loadConfig({});
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.graphql));
  assert.ok(Object.isFrozen(config.corsOrigins));
});

test("settings are read from the environment record", () => {
  const config = loadConfig({
    PORT: "9000",
    FIELDGATE_BASE_URL: "https://auth.example.com/",
    FIELDGATE_CODE_TTL: "600",
    FIELDGATE_REFRESH_REQUIRE_REDIRECT_URI: "yes",
    FIELDGATE_CORS_ORIGINS: "https://a.example, https://b.example:8443",
    FIELDGATE_METRICS_TOKEN: "0123456789abcdef",
    FIELDGATE_SHUTDOWN_GRACE: "30",
    FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1048576",
  });
  assert.equal(config.graphql.maxBoundaryBytes, 1_048_576);
  assert.equal(config.shutdownGraceSeconds, 30);
  assert.equal(loadConfig({}).shutdownGraceSeconds, 10);
  assert.equal(config.port, 9000);
  assert.equal(config.baseUrl, "https://auth.example.com");
  assert.equal(config.codeTtlSeconds, 600);
  assert.equal(config.refreshRequiresRedirectUri, true);
  assert.deepEqual(config.corsOrigins, ["https://a.example", "https://b.example:8443"]);
  assert.equal(config.metricsToken, "0123456789abcdef");
});

test("audit events have their own retention, 90 days by default, set apart from the 7 days of expired credentials", () => {
  const defaults = loadConfig({});
  assert.equal(defaults.retentionSeconds, 7 * 86_400);
  assert.equal(defaults.auditRetentionSeconds, 90 * 86_400);
  const set = loadConfig({ FIELDGATE_RETENTION: "60", FIELDGATE_AUDIT_RETENTION: String(400 * 86_400) });
  assert.deepEqual([set.retentionSeconds, set.auditRetentionSeconds], [60, 400 * 86_400]);
  assert.equal(loadConfig({ FIELDGATE_AUDIT_RETENTION: "0" }).auditRetentionSeconds, 0);
});

test("a base URL with an empty path or only \"/\" is accepted, without the trailing slash", () => {
  assert.equal(loadConfig({ FIELDGATE_BASE_URL: "https://auth.example.com" }).baseUrl, "https://auth.example.com");
  assert.equal(loadConfig({ FIELDGATE_BASE_URL: "https://auth.example.com:8443/" }).baseUrl, "https://auth.example.com:8443");
});

test("sign-in limits default to a derivation concurrency sized from the cores, a queue of 4, 10 sign-ins and 10 sessions", () => {
  const config = loadConfig({});
  assert.equal(config.passwordConcurrency, undefined);
  assert.equal(config.passwordQueue, 4);
  assert.equal(config.signInLimit, 10);
  assert.equal(config.maxSessionsPerUser, 10);
  assert.equal(loadConfig({ FIELDGATE_PASSWORD_CONCURRENCY: "2" }).passwordConcurrency, 2);
});

// Bad settings fail at startup naming the variable (TypeError for a bad shape, RangeError for a bad range).
const bad: { env: Record<string, string>; error: typeof TypeError | typeof RangeError; names: string }[] = [
  { env: { PORT: "eighty" }, error: TypeError, names: "PORT" },
  { env: { PORT: "70000" }, error: RangeError, names: "PORT" },
  { env: { FIELDGATE_CODE_TTL: "601" }, error: RangeError, names: "FIELDGATE_CODE_TTL" },
  { env: { FIELDGATE_CODE_TTL: "-5" }, error: TypeError, names: "FIELDGATE_CODE_TTL" },
  { env: { FIELDGATE_REFRESH_GRACE: "61" }, error: RangeError, names: "FIELDGATE_REFRESH_GRACE" },
  { env: { FIELDGATE_REQUIRE_PKCE: "maybe" }, error: TypeError, names: "FIELDGATE_REQUIRE_PKCE" },
  { env: { FIELDGATE_BASE_URL: "not a url" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "ftp://example.com" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://example.com/?x=1" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://example.com?" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://example.com#" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://user:secret@example.com" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://user@example.com" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  // Every route is served from the root; a path prefix would make the metadata advertise endpoints that 404.
  { env: { FIELDGATE_BASE_URL: "https://example.com/auth" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "https://example.com/auth/" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_BASE_URL: "http://localhost:8080//" }, error: TypeError, names: "FIELDGATE_BASE_URL" },
  { env: { FIELDGATE_CORS_ORIGINS: "https://a.example/path" }, error: TypeError, names: "FIELDGATE_CORS_ORIGINS" },
  { env: { FIELDGATE_CORS_ORIGINS: "nonsense" }, error: TypeError, names: "FIELDGATE_CORS_ORIGINS" },
  { env: { FIELDGATE_METRICS_TOKEN: "short" }, error: RangeError, names: "FIELDGATE_METRICS_TOKEN" },
  { env: { FIELDGATE_MAX_BODY_BYTES: "10" }, error: RangeError, names: "FIELDGATE_MAX_BODY_BYTES" },
  { env: { FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "1023" }, error: RangeError, names: "FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES" },
  { env: { FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "67108865" }, error: RangeError, names: "FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES" },
  { env: { FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES: "4MiB" }, error: TypeError, names: "FIELDGATE_GRAPHQL_MAX_BOUNDARY_BYTES" },
  { env: { FIELDGATE_SHUTDOWN_GRACE: "0" }, error: RangeError, names: "FIELDGATE_SHUTDOWN_GRACE" },
  { env: { FIELDGATE_PASSWORD_CONCURRENCY: "0" }, error: RangeError, names: "FIELDGATE_PASSWORD_CONCURRENCY" },
  { env: { FIELDGATE_PASSWORD_QUEUE: "-1" }, error: TypeError, names: "FIELDGATE_PASSWORD_QUEUE" },
  { env: { FIELDGATE_SIGNIN_LIMIT: "0" }, error: RangeError, names: "FIELDGATE_SIGNIN_LIMIT" },
  { env: { FIELDGATE_MAX_SESSIONS: "0" }, error: RangeError, names: "FIELDGATE_MAX_SESSIONS" },
  { env: { FIELDGATE_AUDIT_RETENTION: "90d" }, error: TypeError, names: "FIELDGATE_AUDIT_RETENTION" },
  { env: { FIELDGATE_AUDIT_RETENTION: String(3_651 * 86_400) }, error: RangeError, names: "FIELDGATE_AUDIT_RETENTION" },
];

for (const row of bad) {
  test(`loadConfig refuses ${JSON.stringify(row.env)}`, () => {
    assert.throws(() => loadConfig(row.env), (error: unknown) => {
      assert.ok(error instanceof row.error, `expected ${row.error.name}, got ${String(error)}`);
      assert.match((error as Error).message, new RegExp(row.names));
      return true;
    });
  });
}

test("demoSetting keeps FIELDGATE_DEMO's three states apart: unset is auto, which serve decides from its files", () => {
  assert.equal(loadConfig({}).demoSetting, "auto");
  assert.equal(loadConfig({ FIELDGATE_DEMO: "" }).demoSetting, "auto");
  assert.equal(loadConfig({ FIELDGATE_DEMO: "yes" }).demoSetting, "on");
  assert.equal(loadConfig({ FIELDGATE_DEMO: "0" }).demoSetting, "off");
  // `demo` is what the app acts on: only an explicit on turns it on here.
  assert.deepEqual([loadConfig({}).demo, loadConfig({ FIELDGATE_DEMO: "on" }).demo], [false, true]);
});

test("FIELDGATE_DATABASE_URL selects PostgreSQL, with a pool of 4 and prepared statements unless set otherwise", () => {
  const sqlite = loadConfig({});
  assert.equal(sqlite.databaseUrl, undefined);
  assert.deepEqual([sqlite.databasePool, sqlite.databasePrepare], [4, true]);
  for (const url of ["postgres://fg:pw@db.internal:5432/fieldgate", "postgresql://fg@db.internal/fieldgate?sslmode=require"]) {
    assert.equal(loadConfig({ FIELDGATE_DATABASE_URL: url }).databaseUrl, url);
  }
  const tuned = loadConfig({ FIELDGATE_DATABASE_URL: "postgres://db/fg", FIELDGATE_DATABASE_POOL: "12", FIELDGATE_DATABASE_PREPARE: "false" });
  assert.deepEqual([tuned.databasePool, tuned.databasePrepare], [12, false]);
  assert.throws(() => loadConfig({ FIELDGATE_DATABASE_POOL: "0" }), /FIELDGATE_DATABASE_POOL must be between 1 and/);
  assert.throws(() => loadConfig({ FIELDGATE_DATABASE_PREPARE: "sometimes" }), /FIELDGATE_DATABASE_PREPARE must be true or false/);
});

const BAD_DATABASE_SETTINGS = [
  {
    name: "both FIELDGATE_DB and FIELDGATE_DATABASE_URL",
    env: { FIELDGATE_DB: "data/fg.db", FIELDGATE_DATABASE_URL: "postgres://fg:hunter2@db/fg" },
    error: /FIELDGATE_DB \(a SQLite file\) and FIELDGATE_DATABASE_URL \(PostgreSQL\) are both set/,
  },
  {
    name: "a FIELDGATE_DATABASE_URL that is not PostgreSQL's",
    env: { FIELDGATE_DATABASE_URL: "mysql://fg:hunter2@db/fg" },
    error: /FIELDGATE_DATABASE_URL has the unknown database URL scheme "mysql:"/,
  },
  {
    name: "a mistyped PostgreSQL scheme in FIELDGATE_DB, which would be taken as a file named after the URL",
    env: { FIELDGATE_DB: "postgress://fg:hunter2@db/fg" },
    error: /FIELDGATE_DB has the unknown database URL scheme "postgress:"/,
  },
  {
    name: "a FIELDGATE_DATABASE_URL that does not parse",
    env: { FIELDGATE_DATABASE_URL: "postgres://fg:hunter2@db:port/fg" },
    error: /FIELDGATE_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/,
  },
  {
    name: "a PostgreSQL URL in FIELDGATE_DB",
    env: { FIELDGATE_DB: "postgres://fg:hunter2@db/fg" },
    error: /FIELDGATE_DB names a SQLite file; put a PostgreSQL URL in FIELDGATE_DATABASE_URL/,
  },
];

for (const row of BAD_DATABASE_SETTINGS) {
  test(`config refuses ${row.name}, without showing the password`, () => {
    assert.throws(() => loadConfig(row.env), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, row.error);
      assert.ok(!error.message.includes("hunter2"));
      return true;
    });
  });
}
