// The embedding surface: what a program that serves fieldgate's fetch handler itself imports (README "Embedding").
// Everything else under src/ is internal and may change.
export { createApp, type App, type AppOptions, type ConnectionInfo } from "./app.ts";
export { loadConfig, type Config } from "./config.ts";
export type { Store } from "./store/contract.ts";
export { openStore } from "./store/sqlite/store.ts";
export { openPostgresStore, type PostgresStoreOptions } from "./store/postgres/store.ts";
export { startMaintenance } from "./server/maintenance.ts";
export type { Bcrypt, BcryptService, BlockCipher, BlockCipherFactory, Clock, Digest, Hmac, Log, Random } from "./deps.ts";
