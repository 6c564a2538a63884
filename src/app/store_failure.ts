// Which store failures are a condition to retry (503) rather than a fault of ours, and what each is logged as.
import { isConnectionsExhausted, isStoreBusy, isStoreClosed, storageFaultOf } from "../store/errors.ts";

/** A store failure the boundary answers with 503 temporarily_unavailable. */
export interface StoreFailure {
  event: "database_closed" | "database_busy" | "database_unavailable" | "database_connections_exhausted";
  /** Seconds the client is told to wait. */
  retryAfter: number;
  /** The storage fault (disk full, read-only, I/O, corrupt), which /healthz reports too. */
  fault?: string;
  /** The fault lets some requests through (connections exhausted): /healthz says degraded, still 200. */
  degraded?: boolean;
  /**
   * /healthz's own ping tells whether the fault has passed (a server that cannot be reached), so it is not reported
   * from memory: an instance is healthy again as soon as its database is.
   */
  pinged?: boolean;
}

/** The store failure `error` is, or undefined for any other error. */
export function classifyStoreFailure(error: unknown): StoreFailure | undefined {
  // The store was closed under requests still running (App.close() waits for them instead).
  if (isStoreClosed(error)) return { event: "database_closed", retryAfter: 1 };
  // PostgreSQL has no connection slot left. Its own event, not busy, which would hide the cause: the operator's to
  // fix by pool size, instance count or max_connections.
  if (isConnectionsExhausted(error)) {
    return { event: "database_connections_exhausted", retryAfter: 1, fault: "connections exhausted", degraded: true };
  }
  // Another connection (the CLI, an sqlite3 shell, another worker) held the write lock past the busy timeout: a
  // condition to retry, not a fault of ours or the client's.
  if (isStoreBusy(error)) return { event: "database_busy", retryAfter: 1 };
  // Disk full, a read-only file, an I/O error, a corrupt page: the operator's to fix, and every write meets it
  // until then. 503 (retry later), no stack: the message is the cause.
  const fault = storageFaultOf(error);
  if (fault === "unreachable") return { event: "database_unavailable", retryAfter: 10, fault, pinged: true };
  return fault ? { event: "database_unavailable", retryAfter: 10, fault } : undefined;
}
