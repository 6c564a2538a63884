// Raw rows for PostgreSQL-only tests: a PgClient and a Store on one test database, and inserts into the grant tables
// that need no Store module, so a module's SQL over those tables is tested on its own.
import { openPostgres, type PgClient, type PgValue } from "../../src/store/postgres/connect.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { Store } from "../../src/store/contract.ts";

/** A store over `url` (migrating it) and a raw client beside it; both closed after `fn`. */
export async function withPgStore<T>(
  url: string,
  fn: (store: Store, pg: PgClient) => Promise<T>,
  options: { lockTimeoutMs?: number } = {},
): Promise<T> {
  const store = await openPostgresStore(url, options);
  const pg = await openPostgres(url, { max: 2 });
  try {
    return await fn(store, pg);
  } finally {
    await pg.close();
    await store.close();
  }
}

let counter = 0;

/** An authorization-code client row; returns its row id. */
export async function insertClientRow(pg: PgClient, options: { name?: string; integrationUserId?: number } = {}): Promise<number> {
  const machine = options.integrationUserId !== undefined;
  const [row] = await pg.query<{ id: number }>(
    `INSERT INTO clients (client_id, secret_hash, name, grant_type, redirect_uri, scope, integration_user_id, created_at)
    VALUES ($1, 'x', $2, $3, $4, 'fields:read', $5, 1) RETURNING id`,
    [
      `raw-client-${++counter}`,
      options.name ?? "App",
      machine ? "client_credentials" : "authorization_code",
      machine ? null : "https://client.example/cb",
      options.integrationUserId ?? null,
    ],
  );
  return row!.id;
}

/** A grant family with a code and an access and a refresh token; expiry times relative to `now`. */
export async function insertGrantRows(
  pg: PgClient,
  grant: { clientId: number; userId: number; now: number; codeTtl?: number; tokenTtl?: number; used?: boolean },
): Promise<{ familyId: string; codeId: number; tokenIds: number[] }> {
  const { clientId, userId, now, codeTtl = 600, tokenTtl = 1_000, used = true } = grant;
  const familyId = `raw-family-${++counter}`;
  await pg.query(
    "INSERT INTO grant_families (id, client_id, user_id, scope, created_at) VALUES ($1, $2, $3, 'fields:read', $4)",
    [familyId, clientId, userId, now],
  );
  const [code] = await pg.query<{ id: number }>(
    `INSERT INTO authorization_codes (code_hash, family_id, client_id, user_id, redirect_uri, scope, issued_at, expires_at,
      used_at) VALUES ($1, $2, $3, $4, 'https://client.example/cb', 'fields:read', $5, $6, $7) RETURNING id`,
    [`raw-code-${counter}`, familyId, clientId, userId, now, now + codeTtl, used ? now : null],
  );
  const tokenIds: number[] = [];
  for (const kind of ["access", "refresh"]) {
    tokenIds.push(await insertTokenRow(pg, { clientId, userId, familyId, kind, issuedAt: now, expiresAt: now + tokenTtl }));
  }
  return { familyId, codeId: code!.id, tokenIds };
}

/** One token row; returns its id. */
export async function insertTokenRow(
  pg: PgClient,
  token: { clientId: number; userId: number; familyId: string | null; kind?: string; issuedAt: number; expiresAt: number },
): Promise<number> {
  const [row] = await pg.query<{ id: number }>(
    `INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, 'fields:read', $7, $8) RETURNING id`,
    [
      `raw-token-${++counter}`,
      token.kind ?? "access",
      token.familyId === null ? "client_credentials" : "authorization_code",
      token.familyId,
      token.clientId,
      token.userId,
      token.issuedAt,
      token.expiresAt,
    ],
  );
  return row!.id;
}

/**
 * Resolves once some backend of this database waits for a lock: the statement under test has reached its wait.
 * Gives up after about 30 s (under the tests' bound), so a statement that never waits fails the test.
 */
export async function untilSomeoneWaitsForALock(pg: PgClient): Promise<void> {
  for (let attempt = 0; attempt < 3_000; attempt++) {
    const [row] = await pg.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (row!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no statement came to wait for a lock");
}

/**
 * Runs `statements` in a transaction on `pg` and keeps it open, its locks held, until release() is called;
 * `taken` resolves once the statements have run, `done` when the transaction has committed.
 */
export function holdTransaction(pg: PgClient, statements: ReadonlyArray<readonly [string, PgValue[]?]>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const ready = new Promise<void>((resolve) => (taken = resolve));
  const done = pg.transaction(async (tx) => {
    for (const [text, params] of statements) await tx.query(text, params);
    taken();
    await released;
  }, { retries: 0 });
  return { taken: Promise.race([ready, done]), release, done };
}
