// Group commit: the writes queued during one event-loop turn share one BEGIN IMMEDIATE … COMMIT, each in its own
// savepoint. A WAL commit costs about 25-45 µs of locking and page writes whatever its size, so under load ten
// token issuances share one instead of paying ten.
// Runtime-agnostic: the connection and the end-of-turn scheduler come from store/sqlite.ts.

/** The part of a SQLite connection a group commit uses. */
export interface Connection {
  exec(sql: string): void;
  readonly isTransaction: boolean;
}

/** Runs `fn` once, after the I/O callbacks of the current event-loop turn (setImmediate on Node and Deno). */
export type AfterTurn = (fn: () => void) => void;

interface Queued {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
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
export function createGroupCommit(db: Connection, nested: (fn: () => void) => void, afterTurn: AfterTurn): GroupCommit {
  let queue: Queued[] = [];
  let holds = 0;
  const commitQueued = () => {
    const jobs = queue;
    queue = [];
    if (jobs.length === 0) return;
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      db.exec("BEGIN IMMEDIATE");
      nested(() => {
        for (const job of jobs) outcomes.push(runSavepoint(db, job.fn));
      });
      db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, i) => (outcomes[i]!.ok ? job.resolve(outcomes[i]!.value) : job.reject(outcomes[i]!.value)));
  };
  // Scheduled once per turn that queued something; during a hold the queue waits for the release.
  const flush = () => {
    if (holds === 0) commitQueued();
  };
  return {
    run: <T>(fn: () => T): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        if (queue.length === 0) afterTurn(flush);
        queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      }),
    async holdWhile(during, limitMs) {
      holds++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        clearTimeout(timer);
        holds--;
        if (holds === 0 && queue.length > 0) afterTurn(flush);
      };
      const timer = setTimeout(release, limitMs);
      try {
        return await during();
      } finally {
        release();
      }
    },
    drain: commitQueued,
  };
}

function runSavepoint(db: Connection, fn: () => unknown): { ok: boolean; value: unknown } {
  db.exec("SAVEPOINT batched");
  try {
    const value = fn();
    db.exec("RELEASE batched");
    return { ok: true, value };
  } catch (error) {
    db.exec("ROLLBACK TO batched");
    db.exec("RELEASE batched");
    return { ok: false, value: error };
  }
}
