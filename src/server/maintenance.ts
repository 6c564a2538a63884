// Background upkeep for a serving process: WAL checkpoints and purges off the request path, on timers.
import type { Config } from "../config.ts";
import { nowSeconds, type Clock, type Log } from "../deps.ts";
import type { Store } from "../store/store.ts";

/** Checkpoint cadence: often enough that the WAL stays small under a token-issuing load. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

export interface Timers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const globalTimers: Timers = {
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as number),
};

// Node's timers keep the event loop alive unless unref'd; Deno returns plain numbers and needs nothing here.
function unref(handle: unknown): void {
  if (typeof handle === "object" && handle !== null && "unref" in handle && typeof handle.unref === "function") {
    handle.unref();
  }
}

/**
 * One checkpoint at a time (a tick that finds the last one still running skips), and a log line when checkpoints
 * stop completing and when they complete again: an incomplete one leaves the WAL to grow, which happens while
 * another connection keeps a read transaction open (a backup, an sqlite3 shell), and an operator should know.
 */
function checkpointer(store: Store, log: Log): () => Promise<unknown> {
  let running = false;
  let complete = true;
  return async () => {
    if (running) return;
    running = true;
    try {
      const outcome = await store.checkpoint();
      if (outcome.complete !== complete) log(outcome.complete ? "wal_checkpoint_complete" : "wal_checkpoint_incomplete");
      complete = outcome.complete;
    } finally {
      running = false;
    }
  };
}

/** Starts the checkpoint and purge timers; the returned stop() clears both (call it before closing the store). */
export function startMaintenance(
  deps: { store: Store; config: Readonly<Config>; clock: Clock; log: Log },
  timers: Timers = globalTimers,
): { stop(): void } {
  const { store, config, clock, log } = deps;
  // A background failure must not kill the server; it is logged for the operator and retried next tick.
  const guard = (task: string, fn: () => Promise<unknown>) => () => {
    fn().catch((error: unknown) =>
      log("maintenance_failed", {
        task,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      })
    );
  };
  const handles = [timers.setInterval(guard("checkpoint", checkpointer(store, log)), CHECKPOINT_INTERVAL_MS)];
  if (config.cleanupIntervalSeconds > 0) {
    handles.push(timers.setInterval(guard("purge", async () => {
      const counts = await store.purge(nowSeconds(clock), config.retentionSeconds);
      log("purged", { ...counts });
    }), config.cleanupIntervalSeconds * 1000));
  }
  handles.forEach(unref);
  return {
    stop() {
      handles.forEach((handle) => timers.clearInterval(handle));
    },
  };
}
