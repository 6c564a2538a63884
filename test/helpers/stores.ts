/**
 * The store contract over both backends: `storeTest(name, fn)` runs `fn` once against a fresh in-memory SQLite
 * store and once against a fresh, migrated PostgreSQL database (skipped, with one note, where PostgreSQL is missing;
 * a failure under CI=true). Each store is closed after its run.
 */
import type { TestContext } from "node:test";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/contract.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { test } from "./bounded.ts";
import { postgresTest } from "./postgres.ts";

export type Backend = "sqlite" | "postgres";

/** What a contract test is told besides node:test's context: the backend, and on PostgreSQL its database's URL. */
export type StoreTestContext = TestContext & { backend: Backend; databaseUrl?: string };

export function storeTest(name: string, fn: (store: Store, t: StoreTestContext) => Promise<void>): void {
  test(`${name} [sqlite]`, async (t) => {
    const store = openStore(":memory:");
    try {
      await fn(store, Object.assign(t, { backend: "sqlite" as const }));
    } finally {
      await store.close();
    }
  });
  postgresTest(`${name} [postgres]`, async (db, t) => {
    const store = await openPostgresStore(db.url);
    try {
      await fn(store, Object.assign(t, { backend: "postgres" as const, databaseUrl: db.url }));
    } finally {
      await store.close();
    }
  }, { migrated: true });
}
