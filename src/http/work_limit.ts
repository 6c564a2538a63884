// A bound on concurrent expensive work (password derivations): a few run, a few wait in order, the rest are refused.
import type { WorkLimit } from "../deps.ts";

/**
 * A per-instance limit of `concurrency` tasks running and `queue` waiting. A task's place is freed when it settles,
 * whether it resolved or threw, and handed to the longest waiting task.
 */
export function createWorkLimit(options: { concurrency: number; queue: number }): WorkLimit {
  if (!(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
    throw new RangeError(`concurrency must be a whole number of at least 1, got ${options.concurrency}`);
  }
  if (!(Number.isInteger(options.queue) && options.queue >= 0)) {
    throw new RangeError(`queue must be a whole number of at least 0, got ${options.queue}`);
  }
  let running = 0;
  const waiting: (() => void)[] = [];

  function release(): void {
    const next = waiting.shift();
    // The place passes straight to the next task, so a newcomer cannot slip in ahead of the queue.
    if (next) next();
    else running--;
  }

  async function start<T>(task: () => Promise<T>, admitted: Promise<void> | undefined): Promise<T> {
    if (admitted) await admitted;
    try {
      return await task();
    } finally {
      release();
    }
  }

  return {
    run(task) {
      if (running < options.concurrency) {
        running++;
        return start(task, undefined);
      }
      if (waiting.length >= options.queue) return undefined;
      return start(task, new Promise<void>((resolve) => waiting.push(resolve)));
    },
    load: () => ({ running, waiting: waiting.length }),
  };
}

/**
 * The default number of concurrent password derivations for a process that may use `cores` cores: all but one, so
 * the event loop keeps a core, and at most three, so PBKDF2 leaves one of libuv's four pool threads on Node.
 */
export function defaultPasswordConcurrency(cores: number): number {
  return Math.min(3, Math.max(1, Math.floor(cores) - 1));
}
