// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { ConsentStore } from "../consents.ts";

export function createPgConsentStore(_pg: PgClient): ConsentStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`ConsentStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as ConsentStore;
}
