// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { ClientStore } from "../clients.ts";

export function createPgClientStore(_pg: PgClient): ClientStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`ClientStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as ClientStore;
}
