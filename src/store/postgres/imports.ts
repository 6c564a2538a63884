// The Doorkeeper import's queries on PostgreSQL (ImportQueries), all in one transaction; the decisions are shared
// with SQLite (../import_decisions.ts).
import type { PgClient, PgQueryable } from "./connect.ts";
import { importStoreOver } from "../imports.ts";
import type { ImportClientRow, ImportQueries, ImportStore } from "../contract.ts";

/** The import store on PostgreSQL: the shared decisions over this file's queries, in one transaction. */
export function createPgImportStore(pg: PgClient): ImportStore {
  return importStoreOver((work) => pg.transaction((tx) => work(pgImportQueries(tx))));
}

/** The organization's id, created when missing. */
async function ensureOrganization(tx: PgQueryable, slug: string, now: number): Promise<number> {
  // Two statements: under READ COMMITTED the SELECT takes a new snapshot, so it also finds a row another
  // transaction committed while the INSERT waited on it, which one statement's snapshot would not show.
  await tx.query(
    "INSERT INTO organizations (slug, name, created_at) VALUES ($1, $1, $2) ON CONFLICT (slug) DO NOTHING",
    [slug, now],
  );
  const [row] = await tx.query<{ id: number }>("SELECT id FROM organizations WHERE slug = $1", [slug]);
  return row!.id;
}

type ClientRow = { id: number; client_id: string; integration_user_id: number | null };
const toClientRow = (row: ClientRow | undefined): ImportClientRow | undefined =>
  row && { id: row.id, clientId: row.client_id, integrationUserId: row.integration_user_id };

// The grant's new tokens ($1, a JSON array, inserted in its order) under the family $2 (created unless it exists),
// and the consent when $7 asks for it and none exists. One statement: the foreign keys are checked at its end, when
// the family row is there.
const WRITE_GRANT = `WITH family AS (
    INSERT INTO grant_families (id, client_id, user_id, scope, created_at)
    SELECT $2::text, $3::bigint, $4::bigint, $5::text, $6::bigint WHERE $2::text IS NOT NULL
    ON CONFLICT (id) DO NOTHING),
  added AS (
    INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at)
    SELECT t.token_hash, t.kind, t.grant_type, $2::text, $3::bigint, $4::bigint, t.scope, t.issued_at, t.expires_at
    FROM ROWS FROM (json_to_recordset($1::text::json) AS (token_hash text, kind text, grant_type text, scope text,
      issued_at bigint, expires_at bigint)) WITH ORDINALITY
      AS t(token_hash, kind, grant_type, scope, issued_at, expires_at, position)
    ORDER BY t.position)
  INSERT INTO consents (user_id, client_id, scope, granted_at) SELECT $4::bigint, $3::bigint, $5::text, $6::bigint
  WHERE $7::boolean
  ON CONFLICT (user_id, client_id) DO NOTHING RETURNING 1`;

function pgImportQueries(tx: PgQueryable): ImportQueries {
  return {
    async findLiveUserByName(username) {
      // Matched as the unique index users_username_nocase matches (ASCII case folded).
      const [row] = await tx.query<{ id: number; kind: string }>(
        `SELECT id, kind FROM users WHERE lower(username COLLATE "C") = lower($1 COLLATE "C") AND deleted_at IS NULL`,
        [username],
      );
      return row;
    },
    async findLiveUser(id) {
      const [row] = await tx.query<{ id: number; kind: string }>(
        "SELECT id, kind FROM users WHERE id = $1 AND deleted_at IS NULL",
        [id],
      );
      return row;
    },
    async actsForAClient(userId) {
      return (await tx.query("SELECT 1 FROM clients WHERE integration_user_id = $1", [userId])).length > 0;
    },
    async findClient(clientId) {
      const [row] = await tx.query<ClientRow>(
        "SELECT id, client_id, integration_user_id FROM clients WHERE client_id = $1",
        [clientId],
      );
      return toClientRow(row);
    },
    async findClientById(id) {
      const [row] = await tx.query<ClientRow>("SELECT id, client_id, integration_user_id FROM clients WHERE id = $1", [id]);
      return toClientRow(row);
    },
    async insertMember(user, slug, now) {
      const organizationId = await ensureOrganization(tx, slug, now);
      const [row] = await tx.query<{ id: number }>(
        `WITH added AS (
          INSERT INTO users (username, name, kind, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id)
        INSERT INTO memberships (user_id, organization_id, role, created_at) SELECT id, $6, 'member', $5 FROM added
        RETURNING user_id AS id`,
        [user.username, user.name, user.kind, user.passwordHash, now, organizationId],
      );
      return row!.id;
    },
    async joinOrganization(userId, slug, now) {
      const organizationId = await ensureOrganization(tx, slug, now);
      await tx.query(
        `INSERT INTO memberships (user_id, organization_id, role, created_at) VALUES ($1, $2, 'member', $3)
        ON CONFLICT (user_id, organization_id) DO NOTHING`,
        [userId, organizationId, now],
      );
    },
    async insertClient(client, integrationUserId, now) {
      const [row] = await tx.query<{ id: number }>(
        `INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri,
        scope, integration_user_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [
          client.clientId,
          client.secretHash,
          client.name,
          client.grantType,
          client.redirectUris.length ? client.redirectUris.join("\n") : null,
          client.scope,
          integrationUserId,
          now,
        ],
      );
      return row!.id;
    },
    async findTokens(hashes) {
      const found = await tx.query<{ token_hash: string; family_id: string | null }>(
        "SELECT token_hash, family_id FROM tokens WHERE token_hash IN (SELECT json_array_elements_text($1::text::json))",
        [JSON.stringify(hashes)],
      );
      return new Map(found.map((row) => [row.token_hash, row.family_id]));
    },
    async hasConsent(userId, clientId) {
      return (await tx.query("SELECT 1 FROM consents WHERE user_id = $1 AND client_id = $2", [userId, clientId])).length > 0;
    },
    async writeGrant(g) {
      const tokens = JSON.stringify(g.tokens.map((t) => ({
        token_hash: t.tokenHash,
        kind: t.kind,
        grant_type: t.grantType,
        scope: t.scope,
        issued_at: t.issuedAt,
        expires_at: t.expiresAt,
      })));
      const consented = await tx.query(WRITE_GRANT, [tokens, g.familyId, g.clientId, g.userId, g.scope, g.now, g.consent]);
      return consented.length > 0;
    },
    async findRecords(kind, keys) {
      const found = await tx.query<{ source_key: string; target_id: number | null }>(
        `SELECT source_key, target_id FROM doorkeeper_imports
        WHERE kind = $1 AND source_key IN (SELECT json_array_elements_text($2::text::json))`,
        [kind, JSON.stringify(keys)],
      );
      return new Map(found.map((row) => [row.source_key, row.target_id === null ? null : Number(row.target_id)]));
    },
    async record(kind, rows, now) {
      await tx.query(
        `INSERT INTO doorkeeper_imports (kind, source_key, target_id, recorded_at)
        SELECT $1, r.key, r.target_id, $3 FROM json_to_recordset($2::text::json) AS r(key text, target_id bigint)
        ON CONFLICT (kind, source_key) DO NOTHING`,
        [kind, JSON.stringify(rows.map((r) => ({ key: r.key, target_id: r.targetId }))), now],
      );
    },
    async insertAudit(e) {
      await tx.query(
        "INSERT INTO audit_events (at, event, client_id, user_id, ip, detail) VALUES ($1, $2, $3, $4, $5, $6)",
        [e.at, e.event, e.clientId, e.userId, e.ip, e.detail === null ? null : JSON.stringify(e.detail)],
      );
    },
  };
}
