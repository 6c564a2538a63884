/**
 * PostgreSQL stores for tests that need more than storeTest gives: several instances on one database (each its own
 * pool, as two `serve` processes would have), and a store that counts its round trips.
 */
import { openPostgres, type PgClient, type PgQueryable, type PgValue } from "../../src/store/postgres/connect.ts";
import { migratePostgres } from "../../src/store/postgres/migrations.ts";
import { createPostgresStore } from "../../src/store/postgres/store.ts";
import type { Client, Store } from "../../src/store/contract.ts";
import { postgresTest, type TestDatabase } from "./postgres.ts";
import { sqlRows, type StoreRows, webClient } from "./store_rows.ts";

export interface Instances {
  /** One store per instance, each over a pool of its own. */
  stores: Store[];
  /** Rows of tables the token modules do not own, written on a connection of their own. */
  rows: StoreRows;
  /** A plain connection for checks in SQL. */
  sql: PgQueryable;
  close(): Promise<void>;
}

/** `count` stores on the database at `url` (migrated here), each with a pool of `max` connections. */
export async function openInstances(url: string, options: { count?: number; max?: number } = {}): Promise<Instances> {
  const { count = 2, max = 5 } = options;
  const admin = await openPostgres(url, { max: 1 });
  await migratePostgres(admin);
  const pools = await Promise.all(Array.from({ length: count }, () => openPostgres(url, { max })));
  return {
    stores: pools.map(createPostgresStore),
    rows: sqlRows(admin),
    sql: admin,
    async close() {
      await Promise.all([admin, ...pools].map((pg) => pg.close()));
    },
  };
}

/** Two instances on one database, and what every race between them starts from, seeded through the first. */
export interface RaceInstances extends Instances {
  a: Store;
  b: Store;
  /** An authorization-code client, "web". */
  web: Client;
  /** A person the codes and tokens are issued to. */
  userId: number;
}

/**
 * postgresTest on two instances of a fresh database (openInstances) with a web client and a person seeded; the
 * instances are closed after `fn`, whether it passed or not.
 */
export function raceTest(name: string, fn: (w: RaceInstances, db: TestDatabase) => Promise<void>): void {
  postgresTest(name, async (db) => {
    const w = await openInstances(db.url);
    try {
      const [a, b] = w.stores as [Store, Store];
      const web = await webClient(a);
      await fn({ ...w, a, b, web, userId: await w.rows.user() }, db);
    } finally {
      await w.close();
    }
  }, { migrated: true });
}

/** A store whose every wait on the database is counted: a statement, and a transaction's BEGIN and COMMIT. */
export interface CountedStore {
  store: Store;
  rows: StoreRows;
  /** Round trips since the last call (or since opening). */
  trips(): number;
  close(): Promise<void>;
}

export async function openCountedStore(url: string): Promise<CountedStore> {
  const pg = await openPostgres(url);
  await migratePostgres(pg);
  // The pool's own counter (connect.ts stats), the one /metrics reports: BEGIN and COMMIT are round trips too.
  let seen = pg.stats().roundTrips;
  const rows = sqlRows(pg);
  return {
    store: createPostgresStore(pg),
    rows,
    trips() {
      const now = pg.stats().roundTrips;
      const n = now - seen;
      seen = now;
      return n;
    },
    close: () => pg.close(),
  };
}

/**
 * Resolves once `n` sessions on this database wait for a lock: how a test orders an interleaving (this statement
 * is blocked, now start that one) without timing anything.
 */
export async function lockWaits(sql: PgQueryable, n: number): Promise<void> {
  for (;;) {
    const [row] = await sql.query(`SELECT COUNT(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (Number(row?.n) >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Locks the rows `select` (a SELECT … FOR UPDATE) finds, on a connection of its own, until release() is called;
 * resolves once they are locked.
 */
export async function holdRows(url: string, select: string, params: PgValue[]): Promise<{ release(): Promise<void> }> {
  const pg = await openPostgres(url, { max: 1 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let locked!: () => void;
  const lockedNow = new Promise<void>((resolve) => locked = resolve);
  const held = pg.transaction(async (tx) => {
    await tx.query(select, params);
    locked();
    await released;
  });
  await Promise.race([lockedNow, held]);
  return {
    async release() {
      release();
      await held;
      await pg.close();
    },
  };
}
