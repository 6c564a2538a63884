// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { TokenStore } from "../tokens.ts";

export function createPgTokenStore(_pg: PgClient): TokenStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`TokenStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as TokenStore;
}
