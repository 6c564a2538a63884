// The Store over a SQLite file: each table module's operations, purge, and the maintenance only a file needs.
import type { SqliteStore } from "../contract.ts";
import { type Db, openDatabase, type OpenOptions } from "./database.ts";
import { createOrganizationStore } from "./organizations.ts";
import { createUserStore } from "./users.ts";
import { createClientStore } from "./clients.ts";
import { createCodeStore } from "./codes.ts";
import { createTokenStore } from "./tokens.ts";
import { createSessionStore } from "./sessions.ts";
import { createConsentStore } from "./consents.ts";
import { createFieldStore } from "./fields.ts";
import { createAuditStore } from "./audit.ts";
import { createDemoStateStore } from "./demo_states.ts";
import { createSecretStore } from "./secrets.ts";
import { createReadViews } from "./read_cache.ts";
import { createImportStore } from "./import_queries.ts";
import { createThrottleStore } from "./throttles.ts";
import { createClientAuthentication } from "./client_authentication.ts";

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
        dpopProofs: Number(db.prepare("DELETE FROM dpop_proofs WHERE expires_at < ?").run(now).changes),
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
