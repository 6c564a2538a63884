// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { DemoStateStore } from "../demo_states.ts";

export function createPgDemoStateStore(_pg: PgClient): DemoStateStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`DemoStateStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as DemoStateStore;
}
