// Planning the import of Doorkeeper's oauth_access_tokens: live rows as tokens, rotated pairs as one family.
import { ACCESS_TOKEN_TTL_SECONDS, KNOWN_SCOPES } from "../../config.ts";
import type { Digest, Random } from "../../deps.ts";
import { randomId } from "../../crypto/random.ts";
import { IMPORTED_FAMILY_PREFIX } from "../../store/imports.ts";
import type { ImportedGrant, ImportedToken, ImportRefusal } from "../../store/contract.ts";
import type { CsvRecord } from "../csv.ts";
import { parseDatetime, present, sha256Of } from "./values.ts";

export const TOKEN_COLUMNS = ["id", "resource_owner_id", "application_id", "token", "refresh_token", "expires_in", "revoked_at", "created_at", "scopes"] as const;

export interface TokenPlanContext {
  /** oauth_applications.id -> uid, for the applications planned as clients. */
  uidById: ReadonlyMap<string, string>;
  /** oauth_applications.id of the applications the file refused. */
  refusedApplicationIds: ReadonlySet<string>;
  /** uid -> registered scope, for the applications being imported. */
  scopeByUid: ReadonlyMap<string, string>;
  /** resource_owner_id values the owners file maps. */
  ownerKeys: ReadonlySet<string>;
  now: number;
  refreshTtlSeconds: number;
  random: Random;
  /** The SHA-256 a token column is stored under: the adapter's synchronous one saves a thread-pool trip per token. */
  digest: Digest;
}

/** Clients whose tokens show a refresh token exchanged more than once before its successor was used. */
export interface RepeatedRefresh {
  clientId: string;
  tokens: number;
}

export interface TokenPlan {
  grants: ImportedGrant[];
  refusals: ImportRefusal[];
  /** Rows not imported because nothing in them is usable any more. */
  skipped: { revoked: number; expired: number };
  repeatedRefreshes: RepeatedRefresh[];
}

/** A usable row, before it is grouped with the rows it was rotated from or into. */
interface LiveRow {
  clientId: string;
  ownerKey: string | null;
  scope: string;
  refreshHash: string | undefined;
  previousHash: string | undefined;
  tokens: ImportedToken[];
}

type RowOutcome = { live: LiveRow } | { skipped: "revoked" | "expired" } | { reason: string };

function scopeOf(scopes: string, registered: string | undefined): string | { unknown: string[] } {
  const names = [...new Set(scopes.split(/\s+/).filter(Boolean))];
  // An empty scope is Doorkeeper's default scopes: the application's own, as fieldgate registers them.
  if (names.length === 0) return registered ?? Object.keys(KNOWN_SCOPES).join(" ");
  const unknown = names.filter((name) => !Object.hasOwn(KNOWN_SCOPES, name));
  return unknown.length ? { unknown } : names.join(" ");
}

async function planRow(ctx: TokenPlanContext, line: number, fields: Readonly<Record<string, string>>): Promise<RowOutcome> {
  const clientId = ctx.uidById.get(fields.application_id ?? "");
  if (ctx.refusedApplicationIds.has(fields.application_id ?? "")) return { reason: "its application was refused" };
  if (clientId === undefined) return { reason: "no application with this application_id in the applications file" };
  if (present(fields.revoked_at)) return { skipped: "revoked" };
  const createdAt = parseDatetime(fields.created_at);
  if (createdAt === undefined) return { reason: "created_at is not a YYYY-MM-DD HH:MM:SS time" };
  const token = present(fields.token);
  if (token === undefined) return { reason: "it has no token" };
  const expiresIn = present(fields.expires_in);
  if (expiresIn !== undefined && !/^\d{1,10}$/.test(expiresIn)) return { reason: "expires_in is not a whole number of seconds" };
  const ownerKey = present(fields.resource_owner_id) ?? null;
  const refresh = present(fields.refresh_token);
  if (ownerKey === null && refresh !== undefined) return { reason: "a refresh token without a resource owner" };
  if (ownerKey !== null && !ctx.ownerKeys.has(ownerKey)) return { reason: "its resource owner has no mapping in --owners" };
  const scope = scopeOf(fields.scopes ?? "", ctx.scopeByUid.get(clientId));
  if (typeof scope !== "string") return { reason: `unknown scope ${scope.unknown.join(", ")}` };
  const grantType = ownerKey === null ? "client_credentials" : "authorization_code";
  // A Doorkeeper token without expires_in never expires; here it gets fieldgate's lifetime from the import on.
  const expiresAt = expiresIn === undefined ? ctx.now + ACCESS_TOKEN_TTL_SECONDS[grantType] : createdAt + Number(expiresIn);
  const tokens: ImportedToken[] = [];
  const rowId = fields.id ?? "";
  if (expiresAt > ctx.now) {
    tokens.push({ line, rowId, tokenHash: await sha256Of(token, ctx.digest), kind: "access", grantType, scope, issuedAt: createdAt, expiresAt });
  }
  const refreshHash = refresh === undefined ? undefined : await sha256Of(refresh, ctx.digest);
  if (refreshHash !== undefined) {
    // Doorkeeper's refresh tokens never expire; fieldgate's lifetime runs from the import.
    tokens.push({
      line, rowId, tokenHash: refreshHash, kind: "refresh", grantType: "authorization_code", scope, issuedAt: createdAt,
      expiresAt: ctx.now + ctx.refreshTtlSeconds,
    });
  }
  if (tokens.length === 0) return { skipped: "expired" };
  const previous = present(fields.previous_refresh_token);
  return { live: { clientId, ownerKey, scope, refreshHash, previousHash: previous && await sha256Of(previous, ctx.digest), tokens } };
}

/**
 * Counts, per refresh token, the rows that name it as their previous_refresh_token (revoked rows included): more
 * than one means the client refreshed twice before using the new access token, which fieldgate's rotation answers as
 * reuse. Doorkeeper clears the column once the new token is used, so few rows hold one.
 */
async function countChildren(children: Map<string, { clientId: string; n: number }>, fields: Readonly<Record<string, string>>, ctx: TokenPlanContext): Promise<void> {
  const previous = present(fields.previous_refresh_token);
  if (previous === undefined) return;
  const key = await sha256Of(previous, ctx.digest);
  const clientId = ctx.uidById.get(fields.application_id ?? "") ?? `application_id ${fields.application_id}`;
  children.set(key, { clientId, n: (children.get(key)?.n ?? 0) + 1 });
}

function repeatedRefreshes(children: Map<string, { clientId: string; n: number }>): RepeatedRefresh[] {
  const byClient = new Map<string, number>();
  for (const { clientId, n } of children.values()) if (n > 1) byClient.set(clientId, (byClient.get(clientId) ?? 0) + 1);
  return [...byClient].map(([clientId, tokens]) => ({ clientId, tokens }));
}

/** Rows linked by previous_refresh_token (same client and owner) share one family; the rest get one each. */
function groupFamilies(rows: readonly LiveRow[], random: Random): ImportedGrant[] {
  const root = rows.map((_, index) => index);
  const find = (i: number): number => (root[i] === i ? i : (root[i] = find(root[i]!)));
  const byRefresh = new Map<string, number>();
  rows.forEach((row, index) => row.refreshHash !== undefined && byRefresh.set(row.refreshHash, index));
  rows.forEach((row, index) => {
    const parent = row.previousHash === undefined ? undefined : byRefresh.get(row.previousHash);
    if (parent === undefined) return;
    if (rows[parent]!.clientId !== row.clientId || rows[parent]!.ownerKey !== row.ownerKey) return;
    root[find(index)] = find(parent);
  });
  const grants = new Map<number, ImportedGrant>();
  rows.forEach((row, index) => {
    const key = find(index);
    const grant = grants.get(key);
    if (grant) grant.tokens.push(...row.tokens);
    else {
      const familyId = row.ownerKey === null ? null : IMPORTED_FAMILY_PREFIX + randomId(random);
      grants.set(key, { clientId: row.clientId, ownerKey: row.ownerKey, familyId, scope: rows[key]!.scope, tokens: [...row.tokens] });
    }
  });
  return [...grants.values()];
}

/**
 * Plans every token row in one pass over `records`, which may be streamed: grants to import, refusals, what is no
 * longer usable, and repeated refreshes to warn about. It keeps the live rows only, so memory follows the tokens
 * still usable, not the size of the export.
 */
export async function planTokens(records: AsyncIterable<CsvRecord> | Iterable<CsvRecord>, ctx: TokenPlanContext): Promise<TokenPlan> {
  const plan: TokenPlan = { grants: [], refusals: [], skipped: { revoked: 0, expired: 0 }, repeatedRefreshes: [] };
  const live: LiveRow[] = [];
  const children = new Map<string, { clientId: string; n: number }>();
  for await (const { line, fields } of records) {
    const outcome = await planRow(ctx, line, fields);
    if ("live" in outcome) live.push(outcome.live);
    else if ("skipped" in outcome) plan.skipped[outcome.skipped]++;
    else plan.refusals.push({ kind: "token", line, id: fields.id ?? "", reason: outcome.reason });
    await countChildren(children, fields, ctx);
  }
  plan.grants = groupFamilies(live, ctx.random);
  plan.repeatedRefreshes = repeatedRefreshes(children);
  return plan;
}
