// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { AuditStore } from "../audit.ts";

export function createPgAuditStore(_pg: PgClient): AuditStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`AuditStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as AuditStore;
}
