// Ordered schema steps, applied in one transaction on open. Append only: never edit a step that has shipped.
import type { Migration } from "../contract.ts";

// The fields table's indexes and field_counts triggers, shared by the steps that create them: "initial schema" and
// "field counts" first, then "field ids never reused", which rebuilds the table and must recreate them exactly.
const FIELD_INDEXES = `CREATE INDEX fields_by_organization ON fields(organization_id, id);
CREATE INDEX fields_by_organization_crop ON fields(organization_id, crop, id);
CREATE INDEX fields_by_organization_season ON fields(organization_id, season, id);
`;

const FIELD_COUNT_TRIGGERS = `CREATE TRIGGER field_counts_insert AFTER INSERT ON fields BEGIN
  INSERT INTO field_counts
    VALUES (NEW.organization_id, NEW.crop IS NULL, IFNULL(NEW.crop, ''), NEW.season IS NULL, IFNULL(NEW.season, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER field_counts_delete AFTER DELETE ON fields BEGIN
  UPDATE field_counts SET n = n - 1
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '');
END;

CREATE TRIGGER field_counts_update AFTER UPDATE OF organization_id, crop, season ON fields BEGIN
  UPDATE field_counts SET n = n - 1
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '');
  INSERT INTO field_counts
    VALUES (NEW.organization_id, NEW.crop IS NULL, IFNULL(NEW.crop, ''), NEW.season IS NULL, IFNULL(NEW.season, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
`;

// Times are integer epoch seconds from the injected clock. Credentials (tokens, codes, secrets, sessions)
// are stored only as SHA-256 hex digests; passwords as PBKDF2 strings with their parameters.
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "initial schema",
    sql: `
CREATE TABLE organizations (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('person', 'integration')),
  password_hash TEXT,
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  -- integration users never sign in, so they never have a password
  CHECK (kind = 'person' OR password_hash IS NULL)
);

CREATE TABLE memberships (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  organization_id INTEGER NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  role TEXT NOT NULL DEFAULT 'member',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, organization_id)
) WITHOUT ROWID;
CREATE INDEX memberships_by_organization ON memberships(organization_id);

CREATE TABLE clients (
  id INTEGER PRIMARY KEY,
  client_id TEXT NOT NULL UNIQUE,
  secret_hash TEXT NOT NULL,
  name TEXT NOT NULL,
  grant_type TEXT NOT NULL CHECK (grant_type IN ('authorization_code', 'client_credentials')),
  redirect_uri TEXT,
  scope TEXT NOT NULL,
  integration_user_id INTEGER REFERENCES users(id),
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  secret_rotated_at INTEGER,
  CHECK (grant_type <> 'authorization_code' OR redirect_uri IS NOT NULL),
  CHECK (grant_type <> 'client_credentials' OR integration_user_id IS NOT NULL)
);

-- One row per approval (authorization) or per client-credentials issuance chain root; every token and code
-- carries its family so reuse detection and revocation can kill all descendants at once.
CREATE TABLE grant_families (
  id TEXT PRIMARY KEY,
  client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  revoked_reason TEXT
);
CREATE INDEX grant_families_by_user ON grant_families(user_id, client_id);

CREATE TABLE authorization_codes (
  id INTEGER PRIMARY KEY,
  code_hash TEXT NOT NULL UNIQUE,
  family_id TEXT NOT NULL REFERENCES grant_families(id) ON DELETE CASCADE,
  client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri TEXT NOT NULL,
  scope TEXT NOT NULL,
  code_challenge TEXT,
  code_challenge_method TEXT CHECK (code_challenge_method IS NULL OR code_challenge_method = 'S256'),
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX authorization_codes_by_expiry ON authorization_codes(expires_at);

CREATE TABLE tokens (
  id INTEGER PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_type TEXT NOT NULL CHECK (grant_type IN ('authorization_code', 'refresh_token', 'client_credentials')),
  family_id TEXT REFERENCES grant_families(id) ON DELETE CASCADE,
  client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER,
  -- refresh tokens: when this one was exchanged for a new pair (rotation), for reuse detection and grace
  rotated_at INTEGER,
  -- the refresh token whose rotation produced this token (grace-period retries revoke its siblings)
  parent_id INTEGER REFERENCES tokens(id) ON DELETE SET NULL
);
CREATE INDEX tokens_by_parent ON tokens(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tokens_by_family ON tokens(family_id) WHERE family_id IS NOT NULL;
CREATE INDEX tokens_by_client ON tokens(client_id);
CREATE INDEX tokens_by_expiry ON tokens(expires_at);

CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  session_hash TEXT NOT NULL UNIQUE,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);

CREATE TABLE consents (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  client_id INTEGER NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
  scope TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, client_id)
) WITHOUT ROWID;

CREATE TABLE fields (
  id INTEGER PRIMARY KEY,
  organization_id INTEGER NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  area_ha REAL NOT NULL CHECK (area_ha >= 0),
  crop TEXT,
  season TEXT,
  boundary TEXT NOT NULL,
  centroid_lon REAL NOT NULL,
  centroid_lat REAL NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
${FIELD_INDEXES}
CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  event TEXT NOT NULL,
  client_id TEXT,
  user_id INTEGER,
  ip TEXT,
  detail TEXT
);
CREATE INDEX audit_events_by_time ON audit_events(at);
`,
  },
  {
    // COUNT(*) over a covering index grows with an organization's fields (a 100k-field organization would cost
    // milliseconds per total_count); triggers keep per-(organization, crop, season) counts instead. NULL crop and
    // season get their own flag so a filter value can never match them.
    name: "field counts",
    sql: `
CREATE TABLE field_counts (
  organization_id INTEGER NOT NULL,
  crop_null INTEGER NOT NULL,
  crop TEXT NOT NULL,
  season_null INTEGER NOT NULL,
  season TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (organization_id, crop_null, crop, season_null, season)
) WITHOUT ROWID;

INSERT INTO field_counts
  SELECT organization_id, crop IS NULL, IFNULL(crop, ''), season IS NULL, IFNULL(season, ''), COUNT(*)
  FROM fields GROUP BY 1, 2, 3, 4, 5;

${FIELD_COUNT_TRIGGERS}`,
  },
  {
    // The demo client's per-browser memory (state, PKCE verifier, tokens, the steps it shows) lives here and not in
    // process memory: under `serve --workers N` the kernel hands each connection to any worker, so a callback
    // often reaches another worker than the one that started the demo. key_hash is the SHA-256 of the demo cookie;
    // `sealed` is AES-GCM under a key derived from that cookie (ui/demo_state.ts), so the file alone yields no token.
    name: "demo states",
    sql: `
CREATE TABLE demo_states (
  key_hash TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX demo_states_by_expiry ON demo_states(expires_at);
`,
  },
  {
    // Field ids must never be reused: GraphQL ids and cursors carry them, and integrations keep them to attach
    // records. A plain INTEGER PRIMARY KEY hands out max(id) + 1, so after `fields import --replace` (which
    // deletes, then inserts) or any delete of the newest rows an old id resolved to a different field.
    // AUTOINCREMENT keeps the high-water mark in sqlite_sequence. SQLite cannot add it to an existing table, so
    // the table is rebuilt: rows keep their ids (the sequence starts at the largest), then the indexes and the
    // field_counts triggers are created again from the same text as in the earlier steps (dropping a table
    // drops its indexes and triggers; the implicit delete of DROP TABLE fires no triggers, so the counts stay).
    name: "field ids never reused",
    sql: `
CREATE TABLE fields_autoincrement (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  organization_id INTEGER NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  area_ha REAL NOT NULL CHECK (area_ha >= 0),
  crop TEXT,
  season TEXT,
  boundary TEXT NOT NULL,
  centroid_lon REAL NOT NULL,
  centroid_lat REAL NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO fields_autoincrement (id, organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat,
  created_at, updated_at)
  SELECT id, organization_id, name, area_ha, crop, season, boundary, centroid_lon, centroid_lat, created_at, updated_at
  FROM fields ORDER BY id;
DROP TABLE fields;
ALTER TABLE fields_autoincrement RENAME TO fields;

${FIELD_INDEXES}
${FIELD_COUNT_TRIGGERS}`,
  },
  {
    // `users delete` erases a person but keeps their row as an anonymous tombstone: its id is never handed to the
    // next user (audit rows and the `sub` clients saw keep meaning "that deleted person", not someone new), and
    // nothing that references users needs a rebuild. deleted_at marks the tombstone.
    name: "user tombstones",
    sql: "ALTER TABLE users ADD COLUMN deleted_at INTEGER;",
  },
  {
    // /account counts and ends a person's other sign-in sessions, and disabling a user or setting a password ends
    // all of them: each looks sessions up by user, which without this index reads the whole table.
    name: "sessions by user",
    sql: "CREATE INDEX sessions_by_user ON sessions(user_id);",
  },
  {
    // A field_counts row with n = 0 would keep saying that an organization once grew a crop in a season after its
    // fields were replaced or deleted: the delete and update triggers drop a row when its count reaches 0, and the
    // rows already at 0 go. The insert trigger is unchanged.
    name: "field counts drop empty rows",
    sql: `
DROP TRIGGER field_counts_delete;
CREATE TRIGGER field_counts_delete AFTER DELETE ON fields BEGIN
  UPDATE field_counts SET n = n - 1
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '');
  DELETE FROM field_counts
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '') AND n = 0;
END;

DROP TRIGGER field_counts_update;
CREATE TRIGGER field_counts_update AFTER UPDATE OF organization_id, crop, season ON fields BEGIN
  UPDATE field_counts SET n = n - 1
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '');
  DELETE FROM field_counts
    WHERE organization_id = OLD.organization_id AND crop_null = (OLD.crop IS NULL) AND crop = IFNULL(OLD.crop, '')
    AND season_null = (OLD.season IS NULL) AND season = IFNULL(OLD.season, '') AND n = 0;
  INSERT INTO field_counts
    VALUES (NEW.organization_id, NEW.crop IS NULL, IFNULL(NEW.crop, ''), NEW.season IS NULL, IFNULL(NEW.season, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

DELETE FROM field_counts WHERE n = 0;
`,
  },
  {
    // Per-deployment secrets (the key behind GraphQL ids) live in the database every worker and restart shares, so
    // the ids they make stay the same; one row per name, written once by whichever instance needs it first.
    name: "server secrets",
    sql: `
CREATE TABLE server_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`,
  },
  {
    // A client may register several redirect URIs (RFC 6749 §3.1.2.2; Doorkeeper applications often do): the
    // redirect_uri column now holds them joined by "\n", which no registered URI can contain. The table is unchanged;
    // the step exists so that an older fieldgate, which would read such a list as one URI, refuses this file.
    name: "several redirect URIs per client",
    sql: "-- clients.redirect_uri: registered URIs separated by newlines",
  },
  {
    // Deleting a grant family (purge, erasing a user) cascades to its codes: without this index each family deleted
    // reads the whole codes table.
    name: "authorization codes by family",
    sql: "CREATE INDEX authorization_codes_by_family ON authorization_codes(family_id);",
  },
  {
    // Failure counters that instances sharing the database agree on (several --workers): a budget spent on one is
    // spent on all. Rows live for a window; purge deletes them after it.
    name: "throttle counters",
    sql: `
CREATE TABLE throttle_counters (
  key TEXT PRIMARY KEY,
  window_end INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  pending INTEGER NOT NULL,
  pending_end INTEGER NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    // Disabling a user or changing their password revokes their live tokens, and erasing a user deletes them all:
    // without this index each of those reads the whole tokens table.
    name: "tokens by user",
    sql: "CREATE INDEX tokens_by_user ON tokens(user_id);",
  },
  {
    // What each Doorkeeper import brought in, by the Doorkeeper row it came from (kind: application by uid, owner by
    // resource_owner_id, consent by both, token by digest), so that a re-run never brings back what an operator
    // deleted or revoked since. No foreign keys: the record outlives the rows it names.
    name: "doorkeeper import record",
    sql: `
CREATE TABLE doorkeeper_imports (
  kind TEXT NOT NULL,
  source_key TEXT NOT NULL,
  target_id INTEGER,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (kind, source_key)
) WITHOUT ROWID;
`,
  },
  {
    // A resource server (RFC 7662 §2.1's protected resource) may introspect every token and obtains none itself. The
    // grant_type CHECK cannot change without rebuilding the table, so its row says authorization_code with an empty
    // redirect list, and this column, which the store reads first, says what it is: no grant.
    name: "resource servers",
    sql: `ALTER TABLE clients ADD COLUMN resource_server INTEGER NOT NULL DEFAULT 0 CHECK (resource_server = 0 OR
  (resource_server = 1 AND grant_type = 'authorization_code' AND redirect_uri = '' AND integration_user_id IS NULL));`,
  },
  {
    // DPoP proofs seen (RFC 9449 §11.1): a proof is accepted once, across every instance on the database. Keyed by
    // a digest of the key thumbprint and jti; a row is useless once the proof's iat window is over, and purge deletes
    // it then.
    name: "dpop proofs seen",
    sql: `
CREATE TABLE dpop_proofs (
  key_hash TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX dpop_proofs_by_expiry ON dpop_proofs(expires_at);
`,
  },
  {
    // The RFC 7638 thumbprint of the key a DPoP-bound access token is bound to (RFC 9449 §6); NULL for a Bearer token.
    name: "dpop bound tokens",
    sql: "ALTER TABLE tokens ADD COLUMN dpop_jkt TEXT;",
  },
  {
    // A client whose token requests must carry a DPoP proof (RFC 9449 §5.2, dpop_bound_access_tokens).
    name: "clients requiring dpop",
    sql: "ALTER TABLE clients ADD COLUMN require_dpop INTEGER NOT NULL DEFAULT 0;",
  },
  {
    // The key an authorization request named in dpop_jkt (RFC 9449 §10): the code's exchange must prove it.
    name: "dpop bound codes",
    sql: "ALTER TABLE authorization_codes ADD COLUMN dpop_jkt TEXT;",
  },
  {
    // PostgreSQL's step of the same name moves the tokens' CHECKs into domains; SQLite compiles a CHECK into each
    // prepared statement once, so its constraints stay as they are.
    name: "token kinds as domains",
    sql: "-- nothing to change on SQLite",
  },
];
