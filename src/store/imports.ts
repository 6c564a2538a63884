// The Doorkeeper import's contract, shared by both backends: what it is given, what it answers, and the small set of
// queries each backend runs inside the import's one transaction (the decisions over them are in import_decisions.ts).
import type { NewAuditEvent } from "./sqlite/audit.ts";
import type { ClientGrantType } from "./sqlite/clients.ts";
import { applyImportRows } from "./import_decisions.ts";
import type { NewToken } from "./sqlite/token_rows.ts";

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
  /** Already here: matched, or imported by an earlier run and still present. */
  skipped: number;
  /** Imported by an earlier run and deleted or revoked in fieldgate since: never brought back. */
  removed: number;
  refused: number;
}

export interface ImportResult {
  applications: KindCounts;
  integrationUsers: KindCounts;
  owners: KindCounts;
  tokens: KindCounts;
  consents: number;
  /** Grants whose consent an earlier run recorded and someone revoked since: their new tokens count as removed. */
  consentsRevoked: number;
  /** Refusals the database state caused (an existing user of the wrong kind, a client not imported). */
  refusals: ImportRefusal[];
}

export interface ImportStore {
  /**
   * Applies the import in one transaction. What is already here is skipped, and what an earlier run brought in and
   * an operator removed since (the import record) stays removed, so running it again adds only what is new.
   */
  apply(input: ImportInput): Promise<ImportResult>;
}

/** What the import record names: one Doorkeeper row (or, for a consent, one owner and application) per kind. */
export type ImportRecordKind = "application" | "owner" | "consent" | "token";

/** A live user: found by name (ASCII case folded, as the unique index matches), or by row id. */
export interface ImportUser {
  id: number;
  kind: string;
}

/** A client here, with the integration user a client_credentials client acts as. */
export interface ImportClientRow {
  id: number;
  clientId: string;
  integrationUserId: number | null;
}

/** The new tokens of one grant, written together under `familyId` (created unless it exists). */
export interface GrantWrite {
  familyId: string | null;
  clientId: number;
  userId: number;
  scope: string;
  tokens: readonly ImportedToken[];
  /** Record the user's consent to the client for `scope` when they have none. */
  consent: boolean;
  now: number;
}

/**
 * The reads and writes the import's decisions need, each backend's own, all inside the import's one transaction. No
 * decision lives here: each operation does exactly what its name says.
 */
export interface ImportQueries {
  findLiveUserByName(username: string): Promise<ImportUser | undefined>;
  findLiveUser(id: number): Promise<ImportUser | undefined>;
  /** True when some client acts as this integration user. */
  actsForAClient(userId: number): Promise<boolean>;
  findClient(clientId: string): Promise<ImportClientRow | undefined>;
  findClientById(id: number): Promise<ImportClientRow | undefined>;
  /** A new user, member of the organization `slug` (created when missing); returns the user's id. */
  insertMember(user: { username: string; name: string | null; kind: string; passwordHash: string | null }, slug: string, now: number): Promise<number>;
  /** Adds a membership in `slug` (created when missing), unless there is one. */
  joinOrganization(userId: number, slug: string, now: number): Promise<void>;
  insertClient(client: ImportedClient, integrationUserId: number | null, now: number): Promise<number>;
  /** The tokens of `hashes` that exist (revoked, rotated or expired included): digest -> family id. */
  findTokens(hashes: readonly string[]): Promise<Map<string, string | null>>;
  hasConsent(userId: number, clientId: number): Promise<boolean>;
  /** Writes the grant; true when it recorded a consent. */
  writeGrant(grant: GrantWrite): Promise<boolean>;
  /** The keys of `kind` the import record holds: key -> the fieldgate row id recorded with it (null for none). */
  findRecords(kind: ImportRecordKind, keys: readonly string[]): Promise<Map<string, number | null>>;
  /** Adds rows to the import record; a key already there keeps its first row. */
  record(kind: ImportRecordKind, rows: readonly { key: string; targetId: number | null }[], now: number): Promise<void>;
  insertAudit(event: NewAuditEvent): Promise<void>;
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
export type ImportTransaction = <T>(work: (q: ImportQueries) => Promise<T>) => Promise<T>;

/** Thrown inside the transaction of a dry run to roll it back, carrying what it found. */
class DryRunDone {
  readonly result: ImportResult;
  constructor(result: ImportResult) {
    this.result = result;
  }
}

/** The import store over a backend's transaction: the decisions run once, the same on every backend. */
export function importStoreOver(transact: ImportTransaction): ImportStore {
  return {
    async apply(input) {
      try {
        // A backend that retries the transaction (a PostgreSQL deadlock) runs everything again from a fresh result.
        return await transact(async (q) => {
          const result = await applyImportRows(q, input);
          if (input.dryRun) throw new DryRunDone(result);
          await q.insertAudit(input.audit(result));
          return result;
        });
      } catch (error) {
        if (error instanceof DryRunDone) return error.result;
        throw error;
      }
    },
  };
}
