// The Store interface: async domain operations, each atomic inside the store. Handlers never hold a transaction.
import { openDatabase, type CheckpointOutcome, type Db, type OpenOptions } from "./sqlite/database.ts";
import { createOrganizationStore, type OrganizationStore } from "./sqlite/organizations.ts";
import { createUserStore, type UserStore } from "./sqlite/users.ts";
import { createClientStore, type ClientStore } from "./sqlite/clients.ts";
import { createCodeStore, type CodeStore } from "./sqlite/codes.ts";
import { createTokenStore, type TokenStore } from "./sqlite/tokens.ts";
import { createSessionStore, type SessionStore } from "./sqlite/sessions.ts";
import { createConsentStore, type ConsentStore } from "./sqlite/consents.ts";
import { createFieldStore, type FieldStore } from "./sqlite/fields.ts";
import { createAuditStore, type AuditStore } from "./sqlite/audit.ts";
import { createDemoStateStore, type DemoStateStore } from "./sqlite/demo_states.ts";
import { createSecretStore, type SecretStore } from "./sqlite/secrets.ts";
import { createReadViews } from "./sqlite/read_cache.ts";
import { createImportStore } from "./sqlite/import_queries.ts";
import type { ImportStore } from "./imports.ts";
import { createThrottleStore, type ThrottleStore } from "./sqlite/throttles.ts";
import { createClientAuthentication } from "./sqlite/client_authentication.ts";

export type { ClientAttempt, ClientCheck } from "./sqlite/throttles.ts";

export interface PurgeCounts {
  codes: number;
  tokens: number;
  sessions: number;
  families: number;
  auditEvents: number;
  demoStates: number;
}

/** How long purge keeps rows past their time; Config has both fields, so a caller may pass its config. */
export interface Retention {
  /** Seconds expired codes, tokens, sessions, grant families and demo states are kept. */
  retentionSeconds: number;
  /** Seconds audit events are kept: a trail needs far longer than expired credentials do. */
  auditRetentionSeconds: number;
}

/**
 * Maintenance only a SQLite file has: a PostgreSQL server checks, backs up and checkpoints itself (pg_dump,
 * autovacuum), so its store has none and callers skip what this offers.
 */
export interface SqliteMaintenance {
  /** Runs PRAGMA integrity_check; ["ok"] when the file is sound, otherwise SQLite's list of problems. */
  integrityCheck(): Promise<string[]>;
  /**
   * Writes a consistent, compacted copy of the database to `path` (VACUUM INTO: one read transaction, so a server
   * can go on serving and writing meanwhile). The file must not exist yet, or be empty (the
   * CLI creates it first, exclusively and private).
   * @throws Error from SQLite when the file exists or cannot be written
   */
  backupTo(path: string): Promise<void>;
  /**
   * Takes a WAL checkpoint off the request path and starts the WAL over (Db RESTART: writers wait only for the
   * frames written while it copied), so the WAL stays bounded under a steady write load. Not complete while another
   * connection keeps the WAL in use (a long read transaction): then it gives up at once instead of stalling writers.
   */
  checkpoint(): Promise<CheckpointOutcome>;
  /**
   * Checkpoints everything and empties the -wal file, on this connection (Db TRUNCATE), waiting up to the busy
   * timeout for other connections' writes and reads. For the CLI after an erasure: secure_delete zeroes what was
   * deleted in the main file, but the WAL keeps the older copies of those pages until writes overwrite them.
   * Not complete while another connection keeps reading an older snapshot.
   */
  truncateWal(): Promise<CheckpointOutcome>;
}

/**
 * What a store has asked of its database server since it opened, for /metrics: a round trip is one wait for the
 * server, so round trips per request is what a request pays in network latency, whatever its CPU cost.
 */
export interface StoreStats {
  roundTrips: number;
  statements: number;
}

/** Every domain operation, each one atomic in whichever database holds it. */
export interface Store {
  organizations: OrganizationStore;
  users: UserStore;
  clients: ClientStore;
  codes: CodeStore;
  tokens: TokenStore;
  sessions: SessionStore;
  consents: ConsentStore;
  fields: FieldStore;
  audit: AuditStore;
  demoStates: DemoStateStore;
  secrets: SecretStore;
  imports: ImportStore;
  /**
   * Throttle counters shared by every instance on this database, and client authentication counted there; purged by
   * `throttles.purgeExpired`.
   */
  throttles: ThrottleStore;
  /** Present on a SQLite store only. */
  maintenance?: SqliteMaintenance;
  /** Present on a store over a database server (PostgreSQL); an in-process SQLite file has no round trips. */
  stats?(): StoreStats;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /**
   * Deletes codes, tokens, sessions and demo states that expired more than `retentionSeconds` before `now`, and
   * audit events older than `auditRetentionSeconds`.
   */
  purge(now: number, retention: Retention): Promise<PurgeCounts>;
  close(): Promise<void>;
}

/** The store over a SQLite file, with the maintenance only a file needs. */
export interface SqliteStore extends Store {
  maintenance: SqliteMaintenance;
}

/** Opens the SQLite file at `path` (":memory:" for tests), migrates it, and returns the Store over it. */
export function openStore(path: string, options: OpenOptions = {}): SqliteStore {
  const db = openDatabase(path, options);
  return createStore(db);
}

function createStore(db: Db): SqliteStore {
  const view = createReadViews(db);
  return {
    organizations: createOrganizationStore(db),
    users: createUserStore(db),
    clients: createClientStore(db),
    codes: createCodeStore(db),
    tokens: createTokenStore(db, view),
    sessions: createSessionStore(db),
    consents: createConsentStore(db),
    fields: createFieldStore(db, view),
    audit: createAuditStore(db),
    demoStates: createDemoStateStore(db),
    secrets: createSecretStore(db),
    imports: createImportStore(db),
    throttles: { ...createThrottleStore(db), authenticateClient: createClientAuthentication(db) },
    async ping() {
      try {
        // A read of a real table: SELECT 1 never touches the file, and answered "ok" over a database that had
        // been overwritten with garbage while every token request failed.
        return db.prepare("SELECT MAX(version) > 0 AS ok FROM schema_migrations").get()?.ok === 1;
      } catch {
        // A closed or unreadable database is exactly what the health check reports as false.
        return false;
      }
    },
    async purge(now, { retentionSeconds, auditRetentionSeconds }) {
      const cutoff = now - retentionSeconds;
      // The audit trail outlives the credentials it describes: it is reviewed weeks later, and replayed after a
      // restore (`audit --since <backup time>`).
      const auditCutoff = now - auditRetentionSeconds;
      return db.transactionBatched(() => ({
        // A used code stays while its family has a live token: a later replay must still find it and revoke the
        // family (RFC 6749 §4.1.2) instead of reporting it missing.
        codes: Number(
          db.prepare(`DELETE FROM authorization_codes WHERE expires_at < ?
            AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.family_id = authorization_codes.family_id
              AND t.expires_at >= ?)`).run(cutoff, now).changes,
        ),
        tokens: Number(db.prepare("DELETE FROM tokens WHERE expires_at < ?").run(cutoff).changes),
        sessions: Number(db.prepare("DELETE FROM sessions WHERE expires_at < ?").run(cutoff).changes),
        // A family is dead once no token or code refers to it any more.
        families: Number(
          db.prepare(`DELETE FROM grant_families WHERE created_at < ?
            AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.family_id = grant_families.id)
            AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.family_id = grant_families.id)`).run(cutoff)
            .changes,
        ),
        auditEvents: Number(db.prepare("DELETE FROM audit_events WHERE at < ?").run(auditCutoff).changes),
        demoStates: Number(db.prepare("DELETE FROM demo_states WHERE expires_at < ?").run(cutoff).changes),
      }));
    },
    maintenance: {
      async backupTo(path) {
        db.prepare("VACUUM INTO ?").run(path);
      },
      async integrityCheck() {
        return db.prepare("PRAGMA integrity_check").all().map((row) => String(Object.values(row)[0]));
      },
      async checkpoint() {
        return db.checkpointInBackground("RESTART");
      },
      async truncateWal() {
        return db.checkpoint("TRUNCATE");
      },
    },
    async close() {
      db.close();
    },
  };
}
