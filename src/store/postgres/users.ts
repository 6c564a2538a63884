// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { UserStore } from "../users.ts";

export function createPgUserStore(_pg: PgClient): UserStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`UserStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as UserStore;
}
