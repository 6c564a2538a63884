// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { CodeStore } from "../codes.ts";

export function createPgCodeStore(_pg: PgClient): CodeStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`CodeStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as CodeStore;
}
