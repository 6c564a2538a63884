// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { SessionStore } from "../sessions.ts";

export function createPgSessionStore(_pg: PgClient): SessionStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`SessionStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as SessionStore;
}
