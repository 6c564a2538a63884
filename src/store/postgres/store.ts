// The Store over PostgreSQL: each domain operation one short transaction (or one statement) on a shared pool.
import type { PurgeCounts, Retention, Store } from "../contract.ts";
import { openPostgres, type PgClient, type PgOptions } from "./connect.ts";
import { migratePostgres } from "./migrations.ts";
import { createPgOrganizationStore } from "./organizations.ts";
import { createPgUserStore } from "./users.ts";
import { createPgClientStore } from "./clients.ts";
import { createPgCodeStore } from "./codes.ts";
import { createPgTokenStore } from "./tokens.ts";
import { createPgSessionStore } from "./sessions.ts";
import { createPgConsentStore } from "./consents.ts";
import { createPgFieldStore } from "./fields.ts";
import { createPgAuditStore } from "./audit.ts";
import { createPgDemoStateStore } from "./demo_states.ts";
import { createPgSecretStore } from "./secrets.ts";
import { createPgImportStore } from "./imports.ts";
import { createPgThrottleStore } from "./throttles.ts";
import { createRememberedClients } from "./remembered_clients.ts";
import { purgePostgres } from "./purge.ts";

export interface PostgresStoreOptions extends PgOptions {
  /** Epoch ms, recorded with each applied migration. */
  now?: number;
  /** Called once the database is at the current version, with the names of the steps this open applied. */
  onMigrated?: (applied: readonly string[]) => void;
}

// Defined with the setting it reads (config.ts), where the adapters and the CLI reach it without loading this module.
export { isPostgresUrl } from "../../config.ts";

/**
 * Opens a pool to the database at `url`, applies pending migrations under the advisory lock (so instances starting
 * together never race), and returns the Store over it.
 * @throws SchemaTooNewError, ForeignDatabaseError as SQLite's openStore does; connection errors as postgres.js raises them
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const pg = await openPostgres(url, options);
  try {
    const report = await migratePostgres(pg, { now: options.now });
    options.onMigrated?.(report.applied);
  } catch (error) {
    await pg.close({ timeoutSeconds: 0 });
    throw error;
  }
  return createPostgresStore(pg);
}

/** The Store over an open, migrated pool; close() ends the pool. */
export function createPostgresStore(pg: PgClient): Store {
  return {
    organizations: createPgOrganizationStore(pg),
    users: createPgUserStore(pg),
    clients: createPgClientStore(pg),
    codes: createPgCodeStore(pg),
    tokens: createPgTokenStore(pg),
    sessions: createPgSessionStore(pg),
    consents: createPgConsentStore(pg),
    fields: createPgFieldStore(pg),
    audit: createPgAuditStore(pg),
    demoStates: createPgDemoStateStore(pg),
    secrets: createPgSecretStore(pg),
    imports: createPgImportStore(pg),
    throttles: createPgThrottleStore(pg, createRememberedClients()),
    async ping() {
      try {
        const [row] = await pg.query<{ ok: boolean }>("SELECT MAX(version) > 0 AS ok FROM schema_migrations");
        return row?.ok === true;
      } catch {
        return false;
      }
    },
    purge(now: number, retention: Retention): Promise<PurgeCounts> {
      return purgePostgres(pg, now, retention);
    },
    close: () => pg.close(),
    stats: () => pg.stats(),
  };
}
