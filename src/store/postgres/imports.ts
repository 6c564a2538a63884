// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { ImportStore } from "../imports.ts";

export function createPgImportStore(_pg: PgClient): ImportStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`ImportStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as ImportStore;
}
