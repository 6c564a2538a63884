// PLACEHOLDER: to be implemented (issue 24); every method rejects until then.
import type { PgClient } from "./connect.ts";
import type { OrganizationStore } from "../organizations.ts";

export function createPgOrganizationStore(_pg: PgClient): OrganizationStore {
  return new Proxy({}, {
    get: (_target, name) => () => Promise.reject(new Error(`OrganizationStore.${String(name)} is not implemented on PostgreSQL yet`)),
  }) as OrganizationStore;
}
