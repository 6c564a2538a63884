// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { FieldStore } from "../fields.ts";

export function createPgFieldStore(_pg: PgClient): FieldStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`FieldStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as FieldStore;
}
