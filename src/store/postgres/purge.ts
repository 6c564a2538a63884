// PLACEHOLDER: to be implemented (issue 24).
import type { PurgeCounts, Retention } from "../store.ts";
import type { PgClient } from "./connect.ts";

export function purgePostgres(_pg: PgClient, _now: number, _retention: Retention): Promise<PurgeCounts> {
  return Promise.reject(new Error("purge is not implemented on PostgreSQL yet"));
}
