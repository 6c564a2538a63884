// WAL checkpoints: the statements of each mode, what they achieved, and the thread that runs them off the event loop.
import { Worker } from "node:worker_threads";
import type { CheckpointOutcome } from "../contract.ts";
import type { CheckpointReply, CheckpointRow, CheckpointWorkerData } from "./checkpoint_worker.ts";

/**
 * PASSIVE copies WAL frames into the database without ever blocking readers or writers. RESTART also starts the
 * WAL over, so a busy server's WAL stays about one checkpoint interval of writes long. TRUNCATE empties the file.
 */
export type CheckpointMode = "PASSIVE" | "RESTART" | "TRUNCATE";

/**
 * The statements of each mode. Only a checkpoint that has copied every frame lets the next writer start the WAL
 * over, and under a steady write load a PASSIVE one never has: frames keep arriving while it copies, so the WAL
 * grew by every write until the load stopped (500 MB in 8 s of token issuance, and each lookup in it got slower).
 * SQLite's RESTART holds the write lock for its whole run (30-60 ms under that load, mostly syncing the WAL), so
 * RESTART here first copies the bulk passively, writers still running, and then restarts, holding the lock only
 * for the frames that arrived meanwhile (4-7 ms). The checkpoint thread's connection never waits long for anyone
 * (CHECKPOINT_BUSY_MS), so a reader that keeps the WAL in use makes RESTART give up and report it, not stall writers.
 */
export const CHECKPOINT_SQL: Record<CheckpointMode, readonly string[]> = {
  PASSIVE: ["PRAGMA wal_checkpoint(PASSIVE)"],
  RESTART: ["PRAGMA wal_checkpoint(PASSIVE)", "PRAGMA wal_checkpoint(RESTART)"],
  TRUNCATE: ["PRAGMA wal_checkpoint(TRUNCATE)"],
};

/**
 * How long the checkpoint thread's RESTART may wait for the write lock or for readers to leave the WAL. While it
 * waits it holds the write lock. This process's batched writes wait for it off the event loop (GroupCommit
 * holdWhile), but other writers (Db.transaction, another process) wait in SQLite's busy handler: with the usual 5 s
 * busy timeout, one sqlite3 shell with an open transaction stopped the server for 5 s every second. A commit holds
 * the lock well under a millisecond, but on two busy cores a writer can be descheduled while holding it (10 ms
 * was missed now and then in CI), so 25 ms; past that RESTART gives up (busy) and the next second tries again.
 */
export const CHECKPOINT_BUSY_MS = 25;

/** PASSIVE copies beside writers; the other modes take the write lock for their run. */
export const takesWriteLock = (sql: string): boolean => !sql.includes("(PASSIVE)");

/** Reads the row PRAGMA wal_checkpoint answers: busy is 1 when it gave up; log frames in the WAL, checkpointed copied. */
export function outcomeOf(row: Record<string, unknown> | undefined): CheckpointOutcome {
  return { complete: Number(row?.busy) === 0 && Number(row?.log) === Number(row?.checkpointed) };
}

/** This module's extension, which its sibling shares: .ts in the sources, .js in the built package (dist/). */
const EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf("."));

/**
 * The thread's module, loaded by URL. The single executable has no files beside it: scripts/build_exe.ts bundles
 * the module and puts a data: URL of it in the executable in place of this one.
 */
const WORKER_MODULE = new URL(`./checkpoint_worker${EXTENSION}`, import.meta.url);

interface Pending {
  resolve: (row: CheckpointRow) => void;
  reject: (error: Error) => void;
}

/**
 * A lazily started checkpoint thread for the file at `path`, on Node only. Deno 2.9 runs the same worker, but there
 * it cost more than it saved: alternated `npm run bench -- --runtime deno --only token,refresh` runs
 * gave 7.0k and 7.4k tokens/s with p99 4.2-4.7 ms on the thread against 9.2k and 10.2k with p99 2.4-2.5 ms inline.
 */
export function createCheckpointer(path: string) {
  const enabled = !("Deno" in globalThis);
  let worker: Worker | undefined;
  let closed = false;
  let nextId = 0;
  const pending = new Map<number, Pending>();
  const fail = (error: Error) => {
    // A crashed worker fails what it had in hand; the next checkpoint starts a fresh one.
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    const w = new Worker(WORKER_MODULE, { workerData: { path, busyMs: CHECKPOINT_BUSY_MS } satisfies CheckpointWorkerData });
    w.unref();
    w.on("message", (message: CheckpointReply) => {
      const p = pending.get(message.id);
      pending.delete(message.id);
      if (message.error === undefined) p?.resolve(message.row);
      else p?.reject(new Error(`checkpoint failed: ${message.error}`));
    });
    w.on("error", fail);
    w.on("exit", () => {
      if (worker === w) fail(new Error("checkpoint worker exited"));
    });
    return w;
  };
  return {
    available: () => enabled,
    /** Runs the statements on the thread; resolves with the last one's row. */
    run(statements: readonly string[]): Promise<CheckpointRow> {
      // After close() a late timer must not start a thread on a file the process has let go of.
      if (closed) return Promise.reject(new Error("checkpoint after close"));
      worker ??= start();
      const id = nextId++;
      return new Promise<CheckpointRow>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker!.postMessage({ id, statements });
      });
    },
    close(): void {
      closed = true;
      const w = worker;
      worker = undefined;
      w?.postMessage({ close: true });
    },
  };
}
