// Group commit: the writes queued during one event-loop turn share one BEGIN IMMEDIATE … COMMIT, each in its own
// savepoint when there are several. A WAL commit costs about 25-45 µs of locking and page writes whatever its size,
// so under load ten token issuances share one instead of paying ten.
// Runtime-agnostic: the connection and the end-of-turn scheduler come from database.ts.
import { StoreBusyError } from "../errors.ts";

/** The part of a SQLite connection a group commit uses. */
export interface Connection {
  exec(sql: string): void;
  readonly isTransaction: boolean;
  /**
   * BEGIN IMMEDIATE without waiting in SQLite's busy handler: false at once when another connection holds the
   * write lock (another process, the CLI, an sqlite3 shell), so the wait happens here, off the event loop.
   */
  beginImmediate(): boolean;
}

/** How a commit that finds the write lock taken waits for it. */
export interface BusyWait {
  /** How long a write may wait for the lock, from the first attempt that found it taken, before StoreBusyError. */
  limitMs: number;
  /** Calls `fn` after `ms` (setTimeout); the function returned cancels the call. */
  later(fn: () => void, ms: number): () => void;
  /** Milliseconds from any fixed origin (performance.now). */
  now(): number;
}

const DEFAULT_BUSY_WAIT: BusyWait = {
  limitMs: 5_000,
  later: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
  now: () => performance.now(),
};

/** Retry delays while the lock is taken: short first (most holders commit within a millisecond), then 20 ms. */
const retryDelay = (attempt: number) => Math.min(2 ** attempt, 20);

/** Runs `fn` once, after the I/O callbacks of the current event-loop turn (setImmediate on Node and Deno). */
export type AfterTurn = (fn: () => void) => void;

interface Queued {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When a commit first found the write lock taken with this write queued (BusyWait.now). */
  busySince?: number;
}

export interface GroupCommit {
  /** Queues `fn` for this turn's shared commit; settles after that COMMIT (or with `fn`'s own error). */
  run<T>(fn: () => T): Promise<T>;
  /**
   * Keeps queued writes waiting, without blocking the event loop, while `during` runs: for the checkpoint thread's
   * RESTART, which holds SQLite's write lock. A commit started meanwhile would wait for that lock inside SQLite's
   * busy handler, which sleeps on the event loop in steps of 1, 2, 5, 10 ms (strace under token load: the server
   * stopped for 3 and 8 ms at most checkpoints), stopping reads that had nothing to wait for. The hold ends when
   * `during` settles, or after `limitMs` whatever happens, so writes never wait longer than a busy timeout would
   * have made them.
   */
  holdWhile<T>(during: () => Promise<T>, limitMs: number): Promise<T>;
  /** Commits whatever is queued now, hold or not (closing the database). */
  drain(): void;
}

/** `nested` runs the batch so that transactions opened inside it join the shared one (see Db.transaction). */
export function createGroupCommit(
  db: Connection,
  nested: (fn: () => void) => void,
  afterTurn: AfterTurn,
  busy: BusyWait = DEFAULT_BUSY_WAIT,
): GroupCommit {
  let queue: Queued[] = [];
  let holds = 0;
  // Retries since the lock was last found free: the backoff grows with them.
  let attempts = 0;
  // One retry timer at a time, however many flushes (a hold's release, the timer itself) find the lock busy.
  let retryScheduled = false;
  const retry = () => {
    retryScheduled = false;
    flush();
  };
  /** Commits the queue; `blocking` (closing the database) waits for the lock in SQLite's handler instead. */
  const commitQueued = (blocking = false) => {
    const jobs = queue;
    queue = [];
    if (jobs.length === 0) return;
    let begun: boolean;
    try {
      begun = blocking ? (db.exec("BEGIN IMMEDIATE"), true) : db.beginImmediate();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    if (!begun) {
      // Each write gets the whole limit from the moment it first met the taken lock; those past it fail, the
      // others wait for the next retry.
      const now = busy.now();
      const error = new StoreBusyError(`the database stayed locked by another connection for ${busy.limitMs} ms`);
      for (const job of jobs) {
        job.busySince ??= now;
        if (now - job.busySince >= busy.limitMs) job.reject(error);
        else queue.push(job);
      }
      if (queue.length === 0) attempts = 0;
      if (queue.length > 0 && !retryScheduled) {
        retryScheduled = true;
        busy.later(retry, retryDelay(attempts++));
      }
      return;
    }
    attempts = 0;
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      nested(() => {
        // A write alone in its commit needs no savepoint: its failure rolls back the transaction, which holds
        // nothing else. Two statements fewer per commit when requests do not overlap: token issuance one at a time
        // (bench/inproc.ts) about 124 → 119 µs CPU.
        if (jobs.length === 1) outcomes.push(runAlone(db, jobs[0]!.fn));
        else for (const job of jobs) outcomes.push(runSavepoint(db, job.fn));
      });
      // A write that failed alone has rolled the transaction back.
      if (db.isTransaction) db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => (outcomes[i]!.ok ? job.resolve(outcomes[i]!.value) : job.reject(outcomes[i]!.value)));
  };
  // Scheduled once per turn that queued something; during a hold the queue waits for the release, and while
  // the lock is busy for the retry already scheduled.
  const flush = () => {
    if (holds === 0) commitQueued();
  };
  return {
    run: <T>(fn: () => T): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        if (queue.length === 0) afterTurn(flush);
        // Waiting behind a hold counts toward the busy limit: hold and busy wait together stay within it.
        queue.push({ fn, resolve: resolve as (value: unknown) => void, reject, busySince: holds > 0 ? busy.now() : undefined });
      }),
    async holdWhile(during, limitMs) {
      holds++;
      const now = busy.now();
      for (const job of queue) job.busySince ??= now;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        cancel();
        holds--;
        if (holds === 0 && queue.length > 0) afterTurn(flush);
      };
      const cancel = busy.later(release, limitMs);
      try {
        return await during();
      } finally {
        release();
      }
    },
    drain: () => commitQueued(true),
  };
}

function runAlone(db: Connection, fn: () => unknown): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    return { ok: false, value: error };
  }
}

function runSavepoint(db: Connection, fn: () => unknown): { ok: boolean; value: unknown } {
  db.exec("SAVEPOINT batched");
  try {
    const value = fn();
    db.exec("RELEASE batched");
    return { ok: true, value };
  } catch (error) {
    // SQLite rolls the whole transaction back itself on some errors (disk full, I/O): the savepoint is gone with
    // the other callers' writes, so the error is everyone's, and ROLLBACK TO would replace it with "no such savepoint".
    if (!db.isTransaction) throw error;
    db.exec("ROLLBACK TO batched");
    db.exec("RELEASE batched");
    return { ok: false, value: error };
  }
}
