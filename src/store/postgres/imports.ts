// The Doorkeeper import on PostgreSQL: clients, people and grants in one transaction, all or nothing (see ../imports.ts).
import type { PgClient, PgQueryable } from "./connect.ts";
import type { NewAuditEvent } from "../audit.ts";
import type {
  ImportedClient,
  ImportedGrant,
  ImportedOwner,
  ImportInput,
  ImportResult,
  ImportStore,
  KindCounts,
} from "../imports.ts";

const counts = (): KindCounts => ({ imported: 0, skipped: 0, refused: 0 });

/** Thrown inside the transaction of a dry run to roll it back, carrying what it found. */
class DryRunDone {
  readonly result: ImportResult;
  constructor(result: ImportResult) {
    this.result = result;
  }
}

export function createPgImportStore(pg: PgClient): ImportStore {
  return {
    async apply(input) {
      try {
        // A retry after a deadlock runs everything again from a fresh result: the rolled-back attempt left nothing.
        return await pg.transaction(async (tx) => {
          const result = await applyRows(tx, input);
          if (input.dryRun) throw new DryRunDone(result);
          await insertAudit(tx, input.audit(result));
          return result;
        });
      } catch (error) {
        if (error instanceof DryRunDone) return error.result;
        throw error;
      }
    },
  };
}

interface Context {
  tx: PgQueryable;
  now: number;
  result: ImportResult;
  /** client_id -> its row id and integration user, for every client now present (imported or already there). */
  clients: Map<string, { id: number; integrationUserId: number | null }>;
  /** ownerKey -> user row id. */
  owners: Map<string, number>;
}

async function applyRows(tx: PgQueryable, input: ImportInput): Promise<ImportResult> {
  const result: ImportResult = {
    applications: counts(),
    integrationUsers: counts(),
    owners: counts(),
    tokens: counts(),
    consents: 0,
    refusals: [],
  };
  const ctx: Context = { tx, now: input.now, result, clients: new Map(), owners: new Map() };
  for (const client of input.clients) await applyClient(ctx, client);
  for (const owner of input.owners) await applyOwner(ctx, owner);
  for (const grant of input.grants) await applyGrant(ctx, grant);
  return result;
}

async function insertAudit(tx: PgQueryable, e: NewAuditEvent): Promise<void> {
  await tx.query(
    "INSERT INTO audit_events (at, event, client_id, user_id, ip, detail) VALUES ($1, $2, $3, $4, $5, $6)",
    [
      e.at,
      e.event,
      e.clientId,
      e.userId,
      e.ip,
      e.detail === null ? null : JSON.stringify(e.detail),
    ],
  );
}

/** A live user by name, matched as the unique index users_username_nocase matches (ASCII case folded). */
async function userByName(
  tx: PgQueryable,
  username: string,
): Promise<{ id: number; kind: string } | undefined> {
  const [row] = await tx.query<{ id: number; kind: string }>(
    `SELECT id, kind FROM users WHERE lower(username COLLATE "C") = lower($1 COLLATE "C") AND deleted_at IS NULL`,
    [username],
  );
  return row;
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

async function addMembership(
  tx: PgQueryable,
  organizationId: number,
  userId: number,
  now: number,
): Promise<void> {
  await tx.query(
    `INSERT INTO memberships (user_id, organization_id, role, created_at) VALUES ($1, $2, 'member', $3)
    ON CONFLICT (user_id, organization_id) DO NOTHING`,
    [userId, organizationId, now],
  );
}

/** A new user, member of the organization `slug` (created when missing); returns the user's id. */
async function insertMember(
  tx: PgQueryable,
  user: { username: string; name: string | null; kind: string; passwordHash: string | null },
  slug: string,
  now: number,
): Promise<number> {
  const organizationId = await ensureOrganization(tx, slug, now);
  const [row] = await tx.query<{ id: number }>(
    `WITH added AS (
      INSERT INTO users (username, name, kind, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id)
    INSERT INTO memberships (user_id, organization_id, role, created_at) SELECT id, $6, 'member', $5 FROM added
    RETURNING user_id AS id`,
    [user.username, user.name, user.kind, user.passwordHash, now, organizationId],
  );
  return row!.id;
}

/** The integration user a client acts as: found or created; undefined (with a refusal) when the name is taken otherwise. */
async function integrationUserFor(ctx: Context, client: ImportedClient): Promise<number | undefined> {
  const { tx, result } = ctx;
  const wanted = client.integrationUser!;
  const refuse = (reason: string) => {
    result.integrationUsers.refused++;
    result.refusals.push({ kind: "integration_user", line: client.line, id: client.clientId, reason });
    return undefined;
  };
  const existing = await userByName(tx, wanted.username);
  if (!existing) {
    result.integrationUsers.imported++;
    return await insertMember(
      tx,
      { username: wanted.username, name: null, kind: "integration", passwordHash: null },
      wanted.organization,
      ctx.now,
    );
  }
  if (existing.kind !== "integration") {
    return refuse(`"${wanted.username}" is a person, not an integration user`);
  }
  if ((await tx.query("SELECT 1 FROM clients WHERE integration_user_id = $1", [existing.id])).length > 0) {
    return refuse(`"${wanted.username}" already acts for another client`);
  }
  result.integrationUsers.skipped++;
  return existing.id;
}

async function applyClient(ctx: Context, client: ImportedClient): Promise<void> {
  const { tx, result } = ctx;
  const [existing] = await tx.query<{ id: number; integration_user_id: number | null }>(
    "SELECT id, integration_user_id FROM clients WHERE client_id = $1",
    [client.clientId],
  );
  if (existing) {
    result.applications.skipped++;
    ctx.clients.set(client.clientId, { id: existing.id, integrationUserId: existing.integration_user_id });
    return;
  }
  let integrationUserId: number | null = null;
  if (client.integrationUser) {
    const found = await integrationUserFor(ctx, client);
    if (found === undefined) {
      result.applications.refused++;
      result.refusals.push({
        kind: "application",
        line: client.line,
        id: client.clientId,
        reason: "its integration user was refused",
      });
      return;
    }
    integrationUserId = found;
  }
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
      ctx.now,
    ],
  );
  result.applications.imported++;
  ctx.clients.set(client.clientId, { id: row!.id, integrationUserId });
}

async function applyOwner(ctx: Context, owner: ImportedOwner): Promise<void> {
  const { tx, result, now } = ctx;
  const existing = await userByName(tx, owner.username);
  if (existing) {
    // A person already here keeps their password and memberships, and joins the owners file's organization, so
    // the tokens mapped to them read the data they read under Doorkeeper.
    if (existing.kind !== "person") {
      result.owners.refused++;
      result.refusals.push({
        kind: "owner",
        line: owner.line,
        id: owner.ownerKey,
        reason: `"${owner.username}" is an integration user`,
      });
      return;
    }
    await addMembership(tx, await ensureOrganization(tx, owner.organization, now), existing.id, now);
    result.owners.skipped++;
    ctx.owners.set(owner.ownerKey, existing.id);
    return;
  }
  const id = await insertMember(
    tx,
    { username: owner.username, name: owner.name, kind: "person", passwordHash: owner.passwordHash },
    owner.organization,
    now,
  );
  result.owners.imported++;
  ctx.owners.set(owner.ownerKey, id);
}

function refuseGrant(ctx: Context, grant: ImportedGrant, reason: string): void {
  for (const token of grant.tokens) {
    ctx.result.tokens.refused++;
    ctx.result.refusals.push({ kind: "token", line: token.line, id: token.rowId, reason });
  }
}

// The grant's new tokens ($1, a JSON array, inserted in its order) under the family $2 (created unless it exists),
// and the consent when the grant has an owner ($7) and none exists. One statement: the foreign keys are checked at
// its end, when the family row is there.
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

async function applyGrant(ctx: Context, grant: ImportedGrant): Promise<void> {
  const { tx, result, now } = ctx;
  const client = ctx.clients.get(grant.clientId);
  if (!client) return refuseGrant(ctx, grant, "its application was not imported");
  const userId = grant.ownerKey === null ? client.integrationUserId : ctx.owners.get(grant.ownerKey);
  if (userId === null) {
    return refuseGrant(
      ctx,
      grant,
      "a token without an owner, of an application not listed in --integration-users",
    );
  }
  if (userId === undefined) return refuseGrant(ctx, grant, "its owner was not imported");
  const hashes = JSON.stringify(grant.tokens.map((t) => t.tokenHash));
  const found = await tx.query<{ token_hash: string; family_id: string | null }>(
    "SELECT token_hash, family_id FROM tokens WHERE token_hash IN (SELECT json_array_elements_text($1::text::json))",
    [hashes],
  );
  const existing = new Set(found.map((row) => row.token_hash));
  const fresh = grant.tokens.filter((t) => !existing.has(t.tokenHash));
  result.tokens.skipped += grant.tokens.length - fresh.length;
  if (fresh.length === 0) return;
  // A re-run that finds part of the family already imported adds the rest to that family, not to a new one.
  const earlier = grant.tokens.map((t) => found.find((row) => row.token_hash === t.tokenHash)?.family_id)
    .find((familyId) => familyId !== undefined && familyId !== null);
  const familyId = grant.familyId === null ? null : earlier ?? grant.familyId;
  const tokens = JSON.stringify(fresh.map((t) => ({
    token_hash: t.tokenHash,
    kind: t.kind,
    grant_type: t.grantType,
    scope: t.scope,
    issued_at: t.issuedAt,
    expires_at: t.expiresAt,
  })));
  // The person approved this application in Doorkeeper: fieldgate does not ask again for the same scope.
  const consented = await tx.query(WRITE_GRANT, [
    tokens,
    familyId,
    client.id,
    userId,
    grant.scope,
    now,
    grant.ownerKey !== null,
  ]);
  result.tokens.imported += fresh.length;
  result.consents += consented.length;
}
