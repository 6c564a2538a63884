// The Doorkeeper import's decisions, made once for every backend over ImportQueries: what is imported, skipped,
// kept removed or refused. The import record makes re-runs safe: what an earlier run brought in and an operator
// deleted or revoked since is never brought back.
import type { ImportClientRow, ImportedClient, ImportedGrant, ImportedOwner, ImportInput, ImportQueries, ImportResult, KindCounts } from "./contract.ts";

const counts = (): KindCounts => ({ imported: 0, skipped: 0, removed: 0, refused: 0 });

interface Context {
  q: ImportQueries;
  now: number;
  result: ImportResult;
  /** client_id -> its row, for every client now present (imported or already there). */
  clients: Map<string, ImportClientRow>;
  /** ownerKey -> user row id. */
  owners: Map<string, number>;
  /** client_ids and ownerKeys an earlier run imported and an operator removed since: their grants stay out. */
  removedClients: Set<string>;
  removedOwners: Set<string>;
}

/** Applies clients, then owners, then grants, inside the caller's transaction; returns what it did. */
export async function applyImportRows(q: ImportQueries, input: ImportInput): Promise<ImportResult> {
  const result: ImportResult = {
    applications: counts(),
    integrationUsers: counts(),
    owners: counts(),
    tokens: counts(),
    consents: 0,
    consentsRevoked: 0,
    refusals: [],
  };
  const ctx: Context = {
    q, now: input.now, result, clients: new Map(), owners: new Map(), removedClients: new Set(), removedOwners: new Set(),
  };
  const clientRecords = await q.findRecords("application", input.clients.map((c) => c.clientId));
  for (const client of input.clients) await applyClient(ctx, client, clientRecords);
  const ownerRecords = await q.findRecords("owner", input.owners.map((o) => o.ownerKey));
  for (const owner of input.owners) await applyOwner(ctx, owner, ownerRecords);
  for (const grant of input.grants) await applyGrant(ctx, grant);
  return result;
}

/** The integration user a client acts as: found or created; undefined (with a refusal) when the name is taken otherwise. */
async function integrationUserFor(ctx: Context, client: ImportedClient): Promise<number | undefined> {
  const { q, result } = ctx;
  const wanted = client.integrationUser!;
  const refuse = (reason: string) => {
    result.integrationUsers.refused++;
    result.refusals.push({ kind: "integration_user", line: client.line, id: client.clientId, reason });
    return undefined;
  };
  const existing = await q.findLiveUserByName(wanted.username);
  if (!existing) {
    result.integrationUsers.imported++;
    const user = { username: wanted.username, name: null, kind: "integration", passwordHash: null };
    return await q.insertMember(user, wanted.organization, ctx.now);
  }
  if (existing.kind !== "integration") return refuse(`"${wanted.username}" is a person, not an integration user`);
  if (await q.actsForAClient(existing.id)) return refuse(`"${wanted.username}" already acts for another client`);
  result.integrationUsers.skipped++;
  return existing.id;
}

async function applyClient(ctx: Context, client: ImportedClient, records: Map<string, number | null>): Promise<void> {
  const { q, result, now } = ctx;
  if (records.has(client.clientId)) {
    // Row ids may be reused after a delete: the row must still carry the client_id the record names.
    const row = await q.findClientById(records.get(client.clientId)!);
    if (row?.clientId !== client.clientId) {
      result.applications.removed++;
      ctx.removedClients.add(client.clientId);
      return;
    }
    result.applications.skipped++;
    ctx.clients.set(client.clientId, row);
    return;
  }
  const existing = await q.findClient(client.clientId);
  let row = existing;
  if (existing) result.applications.skipped++;
  else {
    let integrationUserId: number | null = null;
    if (client.integrationUser) {
      const found = await integrationUserFor(ctx, client);
      if (found === undefined) {
        result.applications.refused++;
        result.refusals.push({ kind: "application", line: client.line, id: client.clientId, reason: "its integration user was refused" });
        return;
      }
      integrationUserId = found;
    }
    row = { id: await q.insertClient(client, integrationUserId, now), clientId: client.clientId, integrationUserId };
    result.applications.imported++;
  }
  ctx.clients.set(client.clientId, row!);
  await q.record("application", [{ key: client.clientId, targetId: row!.id }], now);
}

async function applyOwner(ctx: Context, owner: ImportedOwner, records: Map<string, number | null>): Promise<void> {
  const { q, result, now } = ctx;
  if (records.has(owner.ownerKey)) {
    // Mapped by an earlier run: nothing about the person changes, so a membership they left stays left.
    const user = await q.findLiveUser(records.get(owner.ownerKey)!);
    if (!user) {
      result.owners.removed++;
      ctx.removedOwners.add(owner.ownerKey);
      return;
    }
    result.owners.skipped++;
    ctx.owners.set(owner.ownerKey, user.id);
    return;
  }
  const existing = await q.findLiveUserByName(owner.username);
  let id: number;
  if (existing) {
    // A person already here keeps their password and memberships, and joins the owners file's organization, so
    // the tokens mapped to them read the data they read under Doorkeeper.
    if (existing.kind !== "person") {
      result.owners.refused++;
      result.refusals.push({ kind: "owner", line: owner.line, id: owner.ownerKey, reason: `"${owner.username}" is an integration user` });
      return;
    }
    await q.joinOrganization(existing.id, owner.organization, now);
    result.owners.skipped++;
    id = existing.id;
  } else {
    const user = { username: owner.username, name: owner.name, kind: "person", passwordHash: owner.passwordHash };
    id = await q.insertMember(user, owner.organization, now);
    result.owners.imported++;
  }
  ctx.owners.set(owner.ownerKey, id);
  await q.record("owner", [{ key: owner.ownerKey, targetId: id }], now);
}

function refuseGrant(ctx: Context, grant: ImportedGrant, reason: string): void {
  for (const token of grant.tokens) {
    ctx.result.tokens.refused++;
    ctx.result.refusals.push({ kind: "token", line: token.line, id: token.rowId, reason });
  }
}

/** The grant's user, or why its tokens stay out: its client or owner was refused, or removed since an earlier run. */
function userOf(ctx: Context, grant: ImportedGrant): { client: ImportClientRow; userId: number } | { removed: true } | { reason: string } {
  if (ctx.removedClients.has(grant.clientId)) return { removed: true };
  if (grant.ownerKey !== null && ctx.removedOwners.has(grant.ownerKey)) return { removed: true };
  const client = ctx.clients.get(grant.clientId);
  if (!client) return { reason: "its application was not imported" };
  const userId = grant.ownerKey === null ? client.integrationUserId : ctx.owners.get(grant.ownerKey);
  if (userId === null) return { reason: "a token without an owner, of an application not listed in --integration-users" };
  if (userId === undefined) return { reason: "its owner was not imported" };
  return { client, userId };
}

async function applyGrant(ctx: Context, grant: ImportedGrant): Promise<void> {
  const { q, result, now } = ctx;
  const decided = userOf(ctx, grant);
  if ("removed" in decided) {
    result.tokens.removed += grant.tokens.length;
    return;
  }
  if ("reason" in decided) return refuseGrant(ctx, grant, decided.reason);
  const { client, userId } = decided;
  // A token here in any state (revoked, rotated, expired) is skipped, and one the record names but fieldgate no
  // longer holds (purged, its user erased) was removed: neither is written again.
  const present = await q.findTokens(grant.tokens.map((t) => t.tokenHash));
  const absent = grant.tokens.filter((t) => !present.has(t.tokenHash));
  const recorded = await q.findRecords("token", absent.map((t) => t.tokenHash));
  const fresh = absent.filter((t) => !recorded.has(t.tokenHash));
  result.tokens.skipped += present.size;
  result.tokens.removed += recorded.size;
  const seen = grant.tokens.filter((t) => !recorded.has(t.tokenHash)).map((t) => ({ key: t.tokenHash, targetId: null }));
  if (seen.length > 0) await q.record("token", seen, now);
  if (fresh.length === 0) return;
  const consentKey = grant.ownerKey === null ? undefined : JSON.stringify([grant.ownerKey, grant.clientId]);
  if (consentKey !== undefined && (await q.findRecords("consent", [consentKey])).size > 0 && !(await q.hasConsent(userId, client.id))) {
    // The person (or an operator) revoked the approval an earlier run imported: its newer tokens stay out too.
    result.tokens.removed += fresh.length;
    result.consentsRevoked++;
    return;
  }
  // A re-run that finds part of the family already imported adds the rest to that family, not to a new one.
  const earlier = grant.tokens.map((t) => present.get(t.tokenHash)).find((familyId) => familyId !== undefined && familyId !== null);
  const familyId = grant.familyId === null ? null : earlier ?? grant.familyId;
  // The person approved this application in Doorkeeper: fieldgate does not ask again for the same scope.
  const consented = await q.writeGrant({ familyId, clientId: client.id, userId, scope: grant.scope, tokens: fresh, consent: consentKey !== undefined, now });
  result.tokens.imported += fresh.length;
  if (consented) result.consents++;
  if (consentKey !== undefined) await q.record("consent", [{ key: consentKey, targetId: null }], now);
}
