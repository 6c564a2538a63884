// The embedding surface: what a program that serves fieldgate's fetch handler itself imports (README "Embedding").
// Everything else under src/ is internal and may change.
import type { PostgresStoreOptions } from "./store/postgres/store.ts";
import type { Store } from "./store/contract.ts";

export { createApp, type App, type AppOptions, type ConnectionInfo } from "./app.ts";
export { loadConfig, type Config } from "./config.ts";
export type { Store } from "./store/contract.ts";
export { openStore } from "./store/sqlite/store.ts";
export type { PostgresStoreOptions } from "./store/postgres/store.ts";
export { startMaintenance } from "./server/maintenance.ts";
export type { Bcrypt, BcryptService, BlockCipher, BlockCipherFactory, Clock, Digest, Hmac, Log, Random } from "./deps.ts";

/**
 * Opens the PostgreSQL store at `url` as store/postgres/store.ts does; its modules load on the first call, so an
 * embedder on SQLite never loads them.
 */
export async function openPostgresStore(url: string, options?: PostgresStoreOptions): Promise<Store> {
  const postgres = await import("./store/postgres/store.ts");
  return await postgres.openPostgresStore(url, options);
}
