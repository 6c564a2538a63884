// Background upkeep for a serving process: WAL checkpoints and purges off the request path, on timers.
import type { Config } from "../config.ts";
import { nowSeconds, type Clock, type Log } from "../deps.ts";
import type { SqliteMaintenance, Store } from "../store/contract.ts";

/** Checkpoint cadence: often enough that the WAL stays small under a token-issuing load. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

export interface Timers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  /** Milliseconds on a clock that only moves forward with real time (performance.now()); the wall clock can jump. */
  monotonic?(): number;
}

const globalTimers: Timers = {
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as number),
  monotonic: () => performance.now(),
};

/**
 * How far the wall clock may run ahead of the monotonic clock between the start and a purge before the purge
 * stops trusting it. The purge deletes by wall-clock time, so a clock stepped a year ahead (a wrong NTP step, a bad
 * RTC) would delete every token, session and the whole audit trail for good, though all of it is valid again once
 * the clock is corrected. NTP's own adjustments stay far below a minute.
 */
export const CLOCK_JUMP_TOLERANCE_MS = 60_000;

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
function checkpointer(maintenance: SqliteMaintenance, log: Log): () => Promise<unknown> {
  // A tick that finds one running shares its outcome: a skipped tick must not pass for a success (which would
  // log maintenance_recovered in the middle of a run of failures).
  let running: Promise<void> | undefined;
  let complete = true;
  const run = async () => {
    try {
      const outcome = await maintenance.checkpoint();
      if (outcome.complete !== complete) log(outcome.complete ? "wal_checkpoint_complete" : "wal_checkpoint_incomplete");
      complete = outcome.complete;
    } finally {
      running = undefined;
    }
  };
  return () => (running ??= run());
}

/** Starts the checkpoint and purge timers; the returned stop() clears both (call it before closing the store). */
export function startMaintenance(
  deps: { store: Store; config: Readonly<Config>; clock: Clock; log: Log },
  timers: Timers = globalTimers,
): { stop(): void } {
  const { store, config, clock, log } = deps;
  // A background failure must not kill the server; it is logged for the operator and retried next tick. The same
  // failure again (a full disk fails the checkpoint every second) is counted, not logged again, until the task
  // succeeds: then one line says how many times it failed.
  const guard = (task: string, fn: () => Promise<unknown>) => {
    let failing: { error: string; times: number } | undefined;
    return () => {
      fn().then(() => {
        if (failing) log("maintenance_recovered", { task, failures: failing.times });
        failing = undefined;
      }, (error: unknown) => {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (failing?.error === message) {
          failing.times++;
          return;
        }
        failing = { error: message, times: (failing?.times ?? 0) + 1 };
        log("maintenance_failed", { task, error: message, stack: error instanceof Error ? error.stack : undefined });
      });
    };
  };
  const monotonic = timers.monotonic ?? globalTimers.monotonic!;
  const started = { wall: clock(), monotonic: monotonic() };
  const handles: unknown[] = [];
  if (store.maintenance) {
    handles.push(timers.setInterval(guard("checkpoint", checkpointer(store.maintenance, log)), CHECKPOINT_INTERVAL_MS));
  }
  if (config.cleanupIntervalSeconds > 0) {
    handles.push(timers.setInterval(guard("purge", async () => {
      const ahead = (clock() - started.wall) - (monotonic() - started.monotonic);
      if (ahead > CLOCK_JUMP_TOLERANCE_MS) {
        // Skipped, not rebased: while the wall clock stays ahead every purge is skipped. If the clock was wrong at
        // the start and is right now, a restart takes the new time as the reference.
        log("purge_skipped", {
          reason: "the wall clock moved ahead of real time since the start; restart fieldgate once the clock is right",
          ahead_seconds: Math.round(ahead / 1000),
        });
        return;
      }
      const now = nowSeconds(clock);
      // Throttle counters first: they need no retention, just their window over, and a failing purge below must not
      // leave them to pile up.
      const throttleCounters = await store.throttles.purgeExpired(now);
      const counts = await store.purge(now, config);
      log("purged", { ...counts, throttleCounters });
    }), config.cleanupIntervalSeconds * 1000));
  }
  handles.forEach(unref);
  return {
    stop() {
      handles.forEach((handle) => timers.clearInterval(handle));
    },
  };
}
