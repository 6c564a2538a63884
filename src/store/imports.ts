// Importing another server's clients, people and grants (the Doorkeeper import) in one transaction: all or nothing.
import type { Db, Row } from "./sqlite.ts";
import { insertAuditRow, type NewAuditEvent } from "./audit.ts";
import type { ClientGrantType } from "./clients.ts";
import { grantConsentRow } from "./consents.ts";
import { addMembershipRow, ensureOrganizationRow } from "./organizations.ts";
import type { NewToken } from "./token_rows.ts";

/**
 * Grant families made by an import start with this: only they may hold two live refresh tokens at once (a
 * Doorkeeper pair rotated but not yet settled), which rotation then retires together (token_rotation.ts).
 */
export const IMPORTED_FAMILY_PREFIX = "dk_";

/** True for a grant family an import created. */
export function isImportedFamily(familyId: string | null): boolean {
  return familyId !== null && familyId.startsWith(IMPORTED_FAMILY_PREFIX);
}

/** What was refused, where in which file, and why; never a secret, token or password. */
export interface ImportRefusal {
  kind: "application" | "integration_user" | "owner" | "token";
  /** Line of the row in its file. */
  line: number;
  /** The row's public identifier: an application's uid, an owner's resource_owner_id, a token row's id. */
  id: string;
  reason: string;
}

export interface ImportedClient {
  line: number;
  clientId: string;
  /** SHA-256 hex of the secret, as every client secret is stored. */
  secretHash: string;
  name: string;
  grantType: ClientGrantType;
  redirectUris: readonly string[];
  scope: string;
  /** The integration user a client_credentials client acts as, created when missing. */
  integrationUser: { username: string; organization: string } | null;
}

export interface ImportedOwner {
  line: number;
  /** The owner's id in the other server, which its tokens name. */
  ownerKey: string;
  username: string;
  organization: string;
  name: string | null;
  /** A password digest to verify at sign-in (bcrypt for Doorkeeper), or null: no password until one is set. */
  passwordHash: string | null;
}

export interface ImportedToken extends NewToken {
  line: number;
  /** The token row's id in the other server, for refusals. */
  rowId: string;
}

/** Tokens that belong together: one approval's family, or one client-credentials token (no family). */
export interface ImportedGrant {
  clientId: string;
  /** The owner the tokens belong to; null for client-credentials tokens, which belong to the client's integration user. */
  ownerKey: string | null;
  /** The family id to use when none of the tokens exists yet (IMPORTED_FAMILY_PREFIX + random); null without a family. */
  familyId: string | null;
  /** Scope of the family and of the consent recorded for it. */
  scope: string;
  tokens: ImportedToken[];
}

export interface ImportInput {
  clients: readonly ImportedClient[];
  owners: readonly ImportedOwner[];
  grants: readonly ImportedGrant[];
  now: number;
  /** Rolls everything back at the end: the result says what a real run would do. */
  dryRun: boolean;
  /** The audit row for the outcome, written in the same transaction (not on a dry run). */
  audit(result: ImportResult): NewAuditEvent;
}

export interface KindCounts {
  imported: number;
  skipped: number;
  refused: number;
}

export interface ImportResult {
  applications: KindCounts;
  integrationUsers: KindCounts;
  owners: KindCounts;
  tokens: KindCounts;
  consents: number;
  /** Refusals the database state caused (an existing user of the wrong kind, a client not imported). */
  refusals: ImportRefusal[];
}

export interface ImportStore {
  /** Applies the import in one transaction; what already exists is skipped, so running it again adds nothing. */
  apply(input: ImportInput): Promise<ImportResult>;
}

const counts = (): KindCounts => ({ imported: 0, skipped: 0, refused: 0 });

/** Thrown inside the transaction of a dry run to roll it back, carrying what it found. */
class DryRunDone {
  readonly result: ImportResult;
  constructor(result: ImportResult) {
    this.result = result;
  }
}

export function createImportStore(db: Db): ImportStore {
  return {
    async apply(input) {
      try {
        return db.transaction(() => {
          const result = applyRows(db, input);
          if (input.dryRun) throw new DryRunDone(result);
          insertAuditRow(db, input.audit(result));
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
  db: Db;
  now: number;
  result: ImportResult;
  /** client_id -> its row id and integration user, for every client now present (imported or already there). */
  clients: Map<string, { id: number; integrationUserId: number | null }>;
  /** ownerKey -> user row id. */
  owners: Map<string, number>;
}

function applyRows(db: Db, input: ImportInput): ImportResult {
  const result: ImportResult = {
    applications: counts(),
    integrationUsers: counts(),
    owners: counts(),
    tokens: counts(),
    consents: 0,
    refusals: [],
  };
  const ctx: Context = { db, now: input.now, result, clients: new Map(), owners: new Map() };
  for (const client of input.clients) applyClient(ctx, client);
  for (const owner of input.owners) applyOwner(ctx, owner);
  for (const grant of input.grants) applyGrant(ctx, grant);
  return result;
}

function userByName(db: Db, username: string): Row | undefined {
  return db.prepare("SELECT id, kind FROM users WHERE username = ? AND deleted_at IS NULL").get(username) as Row | undefined;
}

function insertMember(db: Db, user: { username: string; name: string | null; kind: string; passwordHash: string | null }, slug: string, now: number): number {
  const organizationId = ensureOrganizationRow(db, { slug, name: slug, now });
  const row = db.prepare(`INSERT INTO users (username, name, kind, password_hash, created_at) VALUES (?, ?, ?, ?, ?)
    RETURNING id`).get(user.username, user.name, user.kind, user.passwordHash, now) as Row;
  addMembershipRow(db, { organizationId, userId: Number(row.id), role: "member", now });
  return Number(row.id);
}

/** The integration user a client acts as: found or created; undefined (with a refusal) when the name is taken otherwise. */
function integrationUserFor(ctx: Context, client: ImportedClient): number | undefined {
  const { db, result } = ctx;
  const wanted = client.integrationUser!;
  const refuse = (reason: string) => {
    result.integrationUsers.refused++;
    result.refusals.push({ kind: "integration_user", line: client.line, id: client.clientId, reason });
    return undefined;
  };
  const existing = userByName(db, wanted.username);
  if (!existing) {
    result.integrationUsers.imported++;
    return insertMember(db, { username: wanted.username, name: null, kind: "integration", passwordHash: null }, wanted.organization, ctx.now);
  }
  if (existing.kind !== "integration") return refuse(`"${wanted.username}" is a person, not an integration user`);
  if (db.prepare("SELECT 1 FROM clients WHERE integration_user_id = ?").get(Number(existing.id))) {
    return refuse(`"${wanted.username}" already acts for another client`);
  }
  result.integrationUsers.skipped++;
  return Number(existing.id);
}

function applyClient(ctx: Context, client: ImportedClient): void {
  const { db, result } = ctx;
  const existing = db.prepare("SELECT id, integration_user_id FROM clients WHERE client_id = ?").get(client.clientId) as Row | undefined;
  if (existing) {
    result.applications.skipped++;
    const integrationUserId = existing.integration_user_id === null ? null : Number(existing.integration_user_id);
    ctx.clients.set(client.clientId, { id: Number(existing.id), integrationUserId });
    return;
  }
  let integrationUserId: number | null = null;
  if (client.integrationUser) {
    const found = integrationUserFor(ctx, client);
    if (found === undefined) {
      result.applications.refused++;
      result.refusals.push({ kind: "application", line: client.line, id: client.clientId, reason: "its integration user was refused" });
      return;
    }
    integrationUserId = found;
  }
  const row = db.prepare(`INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri, scope,
    integration_user_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
    .get(client.clientId, client.secretHash, client.name, client.grantType,
      client.redirectUris.length ? client.redirectUris.join("\n") : null, client.scope, integrationUserId, ctx.now) as Row;
  result.applications.imported++;
  ctx.clients.set(client.clientId, { id: Number(row.id), integrationUserId });
}

function applyOwner(ctx: Context, owner: ImportedOwner): void {
  const { db, result } = ctx;
  const existing = userByName(db, owner.username);
  if (existing) {
    // A person already here keeps their password and memberships, and joins the owners file's organization, so
    // the tokens mapped to them read the data they read under Doorkeeper.
    if (existing.kind !== "person") {
      result.owners.refused++;
      result.refusals.push({ kind: "owner", line: owner.line, id: owner.ownerKey, reason: `"${owner.username}" is an integration user` });
      return;
    }
    const organizationId = ensureOrganizationRow(db, { slug: owner.organization, name: owner.organization, now: ctx.now });
    addMembershipRow(db, { organizationId, userId: Number(existing.id), role: "member", now: ctx.now });
    result.owners.skipped++;
    ctx.owners.set(owner.ownerKey, Number(existing.id));
    return;
  }
  const id = insertMember(db, { username: owner.username, name: owner.name, kind: "person", passwordHash: owner.passwordHash }, owner.organization, ctx.now);
  result.owners.imported++;
  ctx.owners.set(owner.ownerKey, id);
}

function refuseGrant(ctx: Context, grant: ImportedGrant, reason: string): void {
  for (const token of grant.tokens) {
    ctx.result.tokens.refused++;
    ctx.result.refusals.push({ kind: "token", line: token.line, id: token.rowId, reason });
  }
}

function applyGrant(ctx: Context, grant: ImportedGrant): void {
  const { db, result, now } = ctx;
  const client = ctx.clients.get(grant.clientId);
  if (!client) return refuseGrant(ctx, grant, "its application was not imported");
  const userId = grant.ownerKey === null ? client.integrationUserId : ctx.owners.get(grant.ownerKey);
  if (userId === null) return refuseGrant(ctx, grant, "a token without an owner, of an application not listed in --integration-users");
  if (userId === undefined) return refuseGrant(ctx, grant, "its owner was not imported");
  const find = db.prepare("SELECT family_id FROM tokens WHERE token_hash = ?");
  const existing = grant.tokens.map((token) => find.get(token.tokenHash) as Row | undefined);
  const fresh = grant.tokens.filter((_, index) => !existing[index]);
  result.tokens.skipped += grant.tokens.length - fresh.length;
  if (fresh.length === 0) return;
  // A re-run that finds part of the family already imported adds the rest to that family, not to a new one.
  const earlier = existing.find((row) => row && row.family_id !== null)?.family_id;
  const familyId = grant.familyId === null ? null : earlier === undefined ? grant.familyId : String(earlier);
  if (familyId !== null) {
    db.prepare(`INSERT INTO grant_families (id, client_id, user_id, scope, created_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(id) DO NOTHING`).run(familyId, client.id, userId, grant.scope, now);
  }
  const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope,
    issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const t of fresh) insert.run(t.tokenHash, t.kind, t.grantType, familyId, client.id, userId, t.scope, t.issuedAt, t.expiresAt);
  result.tokens.imported += fresh.length;
  // The person approved this application in Doorkeeper: fieldgate does not ask again for the same scope.
  if (grant.ownerKey !== null && !db.prepare("SELECT 1 FROM consents WHERE user_id = ? AND client_id = ?").get(userId, client.id)) {
    grantConsentRow(db, userId, client.id, grant.scope, now);
    result.consents++;
  }
}
