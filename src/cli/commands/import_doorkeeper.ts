// `import doorkeeper --applications FILE [--tokens FILE] [--owners FILE] [--integration-users FILE] [--dry-run]`:
// Doorkeeper's CSV exports become fieldgate clients, people, tokens and consents in one transaction.
import { announceAudit, auditRow } from "../../oauth/audit.ts";
import { sha256Hex } from "../../crypto/hash.ts";
import type { ImportRefusal, ImportResult, KindCounts } from "../../store/contract.ts";
import { optionalFlag, requireFlag } from "../args.ts";
import { CsvError, streamCsvTable, type CsvRecord } from "../csv.ts";
import { APPLICATION_COLUMNS, INTEGRATION_COLUMNS, planApplications, readIntegrationUsers } from "../doorkeeper/applications.ts";
import { OWNER_COLUMNS, planOwners } from "../doorkeeper/owners.ts";
import { planTokens, type RepeatedRefresh, TOKEN_COLUMNS } from "../doorkeeper/tokens.ts";
import { UsageError, type CommandContext, type Command } from "../types.ts";

/** Every refusal is listed in --json; the text lists this many and counts the rest. */
const LISTED_REFUSALS = 50;

/** The file's text as it is read, decoded as UTF-8 (a malformed sequence becomes U+FFFD, as a whole-file read does). */
async function* decoded(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const chunk of chunks) yield decoder.decode(chunk, { stream: true });
  yield decoder.decode();
}

/**
 * The records of the file `--flag` names, streamed: a tokens export can be larger than memory. Undefined without the
 * flag; a missing file or one that is not CSV is a UsageError, raised before the import writes anything.
 */
async function openTable(ctx: CommandContext, flag: string, columns: readonly string[]): Promise<AsyncIterable<CsvRecord> | undefined> {
  const path = optionalFlag(ctx.args, flag);
  if (path === undefined) return undefined;
  const chunks = await ctx.deps.readFileChunks(path);
  if (chunks === undefined) throw new UsageError(`cannot read ${path}: no such file`);
  return (async function* () {
    try {
      yield* streamCsvTable(decoded(chunks), columns);
    } catch (error) {
      if (error instanceof CsvError) throw new UsageError(`--${flag} ${path}: ${error.message}; nothing imported`);
      throw error;
    }
  })();
}

/** Every record of a table small enough to hold (applications, owners, integration users). */
async function readTable(ctx: CommandContext, flag: string, columns: readonly string[]): Promise<CsvRecord[] | undefined> {
  const table = await openTable(ctx, flag, columns);
  if (table === undefined) return undefined;
  const records: CsvRecord[] = [];
  for await (const record of table) records.push(record);
  return records;
}

const countsJson = (c: KindCounts) => ({ imported: c.imported, skipped: c.skipped, removed_since: c.removed, refused: c.refused });

function summary(result: ImportResult, refusals: readonly ImportRefusal[], repeated: readonly RepeatedRefresh[], dryRun: boolean): string {
  const line = (label: string, c: KindCounts) =>
    `  ${label.padEnd(19)}${c.imported} ${dryRun ? "to import" : "imported"}, ${c.skipped} skipped, ` +
    `${c.removed} removed since (not restored), ${c.refused} refused\n`;
  let text = dryRun ? "Dry run: nothing was written.\n" : "Imported from Doorkeeper.\n";
  text += line("applications", result.applications) + line("integration users", result.integrationUsers) +
    line("owners", result.owners) + line("tokens", result.tokens) +
    `  consents           ${result.consents} ${dryRun ? "to record" : "recorded"}, ${result.consentsRevoked} revoked since (not restored)\n`;
  for (const r of refusals.slice(0, LISTED_REFUSALS)) text += `refused ${r.kind} ${JSON.stringify(r.id)} (line ${r.line}): ${r.reason}\n`;
  if (refusals.length > LISTED_REFUSALS) text += `… and ${refusals.length - LISTED_REFUSALS} more refusals (--json lists all)\n`;
  for (const r of repeated) {
    text += `warning: client ${r.clientId}: ${r.tokens} refresh token(s) were refreshed more than once before use; ` +
      "fieldgate answers such a second refresh as reuse and revokes the grant (FIELDGATE_REFRESH_GRACE, docs/migrating-from-doorkeeper.md)\n";
  }
  return text;
}

export const importDoorkeeper: Command = {
  name: "import doorkeeper",
  summary: "import Doorkeeper applications, owners and tokens from CSV exports, all or nothing",
  positionals: [],
  // A dry run writes nothing, not even a new database file.
  createsDatabase: (args) => args.flags["dry-run"] !== true,
  flags: {
    applications: { type: "string", value: "FILE", description: "oauth_applications as CSV with a header row (required)" },
    tokens: { type: "string", value: "FILE", description: "oauth_access_tokens as CSV" },
    owners: { type: "string", value: "FILE", description: "resource_owner_id,username,organization[,name][,password_digest]" },
    "integration-users": { type: "string", value: "FILE", description: "uid,username,organization: client-credentials applications" },
    "dry-run": { type: "boolean", description: "print what would be imported and refused; write nothing" },
  },
  validate(args) {
    requireFlag(args, "applications");
    if (optionalFlag(args, "tokens") !== undefined && optionalFlag(args, "owners") === undefined) {
      // Without owners every person's token would be refused; say so before reading anything.
      throw new UsageError("--tokens needs --owners: each token belongs to the person its resource_owner_id maps to");
    }
  },
  async run(ctx) {
    const { store, config, deps, now } = ctx;
    const dryRun = ctx.args.flags["dry-run"] === true;
    const applications = (await readTable(ctx, "applications", APPLICATION_COLUMNS))!;
    const integration = await readTable(ctx, "integration-users", INTEGRATION_COLUMNS);
    const owners = await readTable(ctx, "owners", OWNER_COLUMNS);
    const tokens = await openTable(ctx, "tokens", TOKEN_COLUMNS);
    const refusals: ImportRefusal[] = [];
    const integrationUsers = readIntegrationUsers(integration ?? [], refusals);
    const apps = await planApplications(applications, integrationUsers);
    refusals.push(...apps.refusals);
    const plannedOwners = planOwners(owners ?? [], refusals);
    const tokenPlan = await planTokens(tokens ?? [], {
      uidById: apps.uidById,
      refusedApplicationIds: apps.refusedIds,
      scopeByUid: new Map(apps.clients.map((c) => [c.clientId, c.scope])),
      ownerKeys: new Set(plannedOwners.map((o) => o.ownerKey)),
      now,
      refreshTtlSeconds: config.refreshTokenTtlSeconds,
      random: deps.random,
      digest: deps.digest ?? sha256Hex,
    });
    refusals.push(...tokenPlan.refusals);
    const result = await store.imports.apply({
      clients: apps.clients,
      owners: plannedOwners,
      grants: tokenPlan.grants,
      now,
      dryRun,
      audit: (r) => auditRow(deps, "doorkeeper_imported", { detail: auditDetail(withFileFindings(r, refusals, tokenPlan.skipped)) }),
    });
    const final = withFileFindings(result, refusals, tokenPlan.skipped);
    const all = [...refusals, ...result.refusals];
    if (!dryRun) announceAudit({ store, clock: deps.clock, log: deps.log }, "doorkeeper_imported", { detail: auditDetail(final) });
    return {
      json: {
        dry_run: dryRun,
        applications: countsJson(final.applications),
        integration_users: countsJson(final.integrationUsers),
        owners: countsJson(final.owners),
        tokens: { ...countsJson(final.tokens), not_usable: tokenPlan.skipped },
        consents: final.consents,
        consents_revoked_since: final.consentsRevoked,
        refusals: all.map((r) => ({ kind: r.kind, line: r.line, id: r.id, reason: r.reason })),
        repeated_refreshes: tokenPlan.repeatedRefreshes.map((r) => ({ client_id: r.clientId, tokens: r.tokens })),
      },
      text: summary(final, all, tokenPlan.repeatedRefreshes, dryRun),
    };
  },
};

const KIND_KEYS = {
  application: "applications",
  integration_user: "integrationUsers",
  owner: "owners",
  token: "tokens",
} as const satisfies Record<ImportRefusal["kind"], keyof ImportResult>;

/** The store's counts with what the files alone decided: their refusals, and token rows no longer usable. */
function withFileFindings(r: ImportResult, refusals: readonly ImportRefusal[], notUsable: { revoked: number; expired: number }): ImportResult {
  const copy = (c: KindCounts) => ({ ...c });
  const merged = {
    ...r,
    applications: copy(r.applications),
    integrationUsers: copy(r.integrationUsers),
    owners: copy(r.owners),
    tokens: copy(r.tokens),
  };
  for (const refusal of refusals) merged[KIND_KEYS[refusal.kind]].refused++;
  merged.tokens.skipped += notUsable.revoked + notUsable.expired;
  return merged;
}

/** Counts only: the audit row never holds a name, secret or token. */
function auditDetail(r: ImportResult): Record<string, unknown> {
  return {
    applications: countsJson(r.applications),
    integration_users: countsJson(r.integrationUsers),
    owners: countsJson(r.owners),
    tokens: countsJson(r.tokens),
    consents: r.consents,
    consents_revoked_since: r.consentsRevoked,
  };
}
