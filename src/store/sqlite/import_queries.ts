// The Doorkeeper import's queries on SQLite (ImportQueries), run synchronously inside one BEGIN IMMEDIATE … COMMIT.
import type { Db, Row } from "./database.ts";
import { insertAuditRow } from "./audit.ts";
import { importStoreOver } from "../imports.ts";
import type { ImportClientRow, ImportQueries, ImportStore } from "../contract.ts";
import { addMembershipRow, ensureOrganizationRow } from "./organizations.ts";

/** The import store on SQLite: the shared decisions (import_decisions.ts) over this file's queries. */
export function createImportStore(db: Db): ImportStore {
  const queries = importQueries(db);
  return importStoreOver(async (work) => {
    // Every query below answers synchronously, so `work` runs to its end in microtasks: no timer, I/O callback or
    // group commit of this process can run a statement inside the transaction. The import is a CLI command that has
    // the connection to itself; a caller already in a transaction would get SQLite's error from BEGIN.
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = await work(queries);
      db.exec("COMMIT");
      return result;
    } catch (error) {
      // After a failed statement or COMMIT SQLite may have rolled back already (disk full, I/O error).
      if (db.inTransaction()) db.exec("ROLLBACK");
      throw error;
    }
  });
}

const toClientRow = (row: Row): ImportClientRow => ({
  id: Number(row.id),
  clientId: String(row.client_id),
  integrationUserId: row.integration_user_id === null ? null : Number(row.integration_user_id),
});

const toUser = (row: Row | undefined) => row && { id: Number(row.id), kind: String(row.kind) };

function importQueries(db: Db): ImportQueries {
  return {
    async findLiveUserByName(username) {
      return toUser(db.prepare("SELECT id, kind FROM users WHERE username = ? AND deleted_at IS NULL").get(username) as Row | undefined);
    },
    async findLiveUser(id) {
      return toUser(db.prepare("SELECT id, kind FROM users WHERE id = ? AND deleted_at IS NULL").get(id) as Row | undefined);
    },
    async actsForAClient(userId) {
      return db.prepare("SELECT 1 FROM clients WHERE integration_user_id = ?").get(userId) !== undefined;
    },
    async findClient(clientId) {
      const row = db.prepare("SELECT id, client_id, integration_user_id FROM clients WHERE client_id = ?").get(clientId) as Row | undefined;
      return row && toClientRow(row);
    },
    async findClientById(id) {
      const row = db.prepare("SELECT id, client_id, integration_user_id FROM clients WHERE id = ?").get(id) as Row | undefined;
      return row && toClientRow(row);
    },
    async insertMember(user, slug, now) {
      const organizationId = ensureOrganizationRow(db, { slug, name: slug, now });
      const row = db.prepare(`INSERT INTO users (username, name, kind, password_hash, created_at) VALUES (?, ?, ?, ?, ?)
        RETURNING id`).get(user.username, user.name, user.kind, user.passwordHash, now) as Row;
      addMembershipRow(db, { organizationId, userId: Number(row.id), role: "member", now });
      return Number(row.id);
    },
    async joinOrganization(userId, slug, now) {
      const organizationId = ensureOrganizationRow(db, { slug, name: slug, now });
      addMembershipRow(db, { organizationId, userId, role: "member", now });
    },
    async insertClient(client, integrationUserId, now) {
      const row = db.prepare(`INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri, scope,
        integration_user_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
        .get(client.clientId, client.secretHash, client.name, client.grantType,
          client.redirectUris.length ? client.redirectUris.join("\n") : null, client.scope, integrationUserId, now) as Row;
      return Number(row.id);
    },
    async findTokens(hashes) {
      const find = db.prepare("SELECT family_id FROM tokens WHERE token_hash = ?");
      const found = new Map<string, string | null>();
      for (const hash of hashes) {
        const row = find.get(hash) as Row | undefined;
        if (row) found.set(hash, row.family_id === null ? null : String(row.family_id));
      }
      return found;
    },
    async hasConsent(userId, clientId) {
      return db.prepare("SELECT 1 FROM consents WHERE user_id = ? AND client_id = ?").get(userId, clientId) !== undefined;
    },
    async writeGrant(g) {
      if (g.familyId !== null) {
        db.prepare(`INSERT INTO grant_families (id, client_id, user_id, scope, created_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT(id) DO NOTHING`).run(g.familyId, g.clientId, g.userId, g.scope, g.now);
      }
      const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope,
        issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const t of g.tokens) insert.run(t.tokenHash, t.kind, t.grantType, g.familyId, g.clientId, g.userId, t.scope, t.issuedAt, t.expiresAt);
      if (!g.consent) return false;
      return db.prepare(`INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES (?, ?, ?, ?)
        ON CONFLICT(user_id, client_id) DO NOTHING RETURNING 1`).get(g.userId, g.clientId, g.scope, g.now) !== undefined;
    },
    async findRecords(kind, keys) {
      const find = db.prepare("SELECT target_id FROM doorkeeper_imports WHERE kind = ? AND source_key = ?");
      const found = new Map<string, number | null>();
      for (const key of keys) {
        const row = find.get(kind, key) as Row | undefined;
        if (row) found.set(key, row.target_id === null ? null : Number(row.target_id));
      }
      return found;
    },
    async record(kind, rows, now) {
      const insert = db.prepare(`INSERT INTO doorkeeper_imports (kind, source_key, target_id, recorded_at) VALUES (?, ?, ?, ?)
        ON CONFLICT(kind, source_key) DO NOTHING`);
      for (const row of rows) insert.run(kind, row.key, row.targetId, now);
    },
    async insertAudit(event) {
      insertAuditRow(db, event);
    },
  };
}
