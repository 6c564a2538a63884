// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { SecretStore } from "../secrets.ts";

export function createPgSecretStore(_pg: PgClient): SecretStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`SecretStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as SecretStore;
}
