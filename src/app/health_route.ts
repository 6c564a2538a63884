// GET /healthz, and the storage fault it reports for a while after a request met one.
import type { Deps } from "../deps.ts";
import type { Route } from "../http/router.ts";

/**
 * How long /healthz reports a storage fault after a request last met one. A read (ping) succeeds on a full disk
 * or a read-only file while every write fails; without this the service looked healthy. Bounded, so that a load
 * balancer that stops sending requests sees the service again and its next write finds out whether it recovered.
 */
const STORAGE_FAULT_REPORT_MS = 10_000;

/** The storage fault requests met last, and when (ms on the app's clock). */
export interface StorageFaults {
  last?: { fault: string; at: number; degraded?: boolean };
}

/** The /healthz route: the store's ping, or the storage fault a request met in the last ten seconds. */
export function healthRoutes(deps: Deps, faults: StorageFaults): Route[] {
  return [{
    method: "GET",
    path: "/healthz",
    handler: async () => {
      const recent = faults.last && deps.clock() - faults.last.at < STORAGE_FAULT_REPORT_MS ? faults.last : undefined;
      // Degraded (connections exhausted) still answers 200: a load balancer that dropped every instance for it would
      // turn a squeeze on connection slots into an outage. The body says so for people and monitors.
      const ok = (!recent || recent.degraded === true) && await deps.store.ping();
      const status = !ok ? "unavailable" : recent ? "degraded" : "ok";
      const body = recent ? { status, database: recent.fault } : { status };
      return deps.respond.json(body, ok ? 200 : 503, { "cache-control": "no-store" });
    },
  }];
}
