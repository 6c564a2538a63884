// A bound on concurrent expensive work (password derivations): a few run, a few wait fairly, the rest are refused.
import type { WorkLimit } from "../deps.ts";

/** The key of a task whose caller named none: such tasks share one key, so together they get one share. */
const UNKEYED = "(none)";

/** A task waiting for a running place. */
interface Waiter {
  /** Its keys, prefixed by its class, as counted in `waitingPerKey`. */
  counted: readonly string[];
  start: () => void;
}

/**
 * How the waiting places are shared: no key (an address bucket, a username) may hold more than `share` of them
 * within its class, and `reserved` of them are kept for priority tasks. A quarter each: with the default queue of
 * 4, one waiting place per key and one kept for browsers that signed in before, so two busy addresses leave the
 * others a place to wait in and a returning user one that no stranger can take.
 */
export function queueShares(queue: number): { share: number; reserved: number } {
  return { share: Math.max(1, Math.floor(queue / 4)), reserved: Math.floor(queue / 4) };
}

/**
 * A per-instance limit of `concurrency` tasks running and `queue` waiting. A task may wait only while each of its
 * keys holds fewer than a share of the waiting places in its class and, for a task without priority, while a place
 * not reserved for priority is free. A freed running place goes to the longest-waiting priority task, else to the
 * longest-waiting other one; a task's place is freed when it settles, whether it resolved or threw.
 */
export function createWorkLimit(options: { concurrency: number; queue: number }): WorkLimit {
  if (!(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
    throw new RangeError(`concurrency must be a whole number of at least 1, got ${options.concurrency}`);
  }
  if (!(Number.isInteger(options.queue) && options.queue >= 0)) {
    throw new RangeError(`queue must be a whole number of at least 0, got ${options.queue}`);
  }
  const { share, reserved } = queueShares(options.queue);
  let running = 0;
  const first: Waiter[] = [];
  const others: Waiter[] = [];
  // Waiting tasks per class-prefixed key; a key leaves the map at zero.
  const waitingPerKey = new Map<string, number>();

  const add = (counts: Map<string, number>, keys: readonly string[], by: number) => {
    for (const key of keys) {
      const count = (counts.get(key) ?? 0) + by;
      if (count > 0) counts.set(key, count);
      else counts.delete(key);
    }
  };

  function mayWait(counted: readonly string[], priority: boolean): boolean {
    if (first.length + others.length >= options.queue) return false;
    if (!priority && others.length >= options.queue - reserved) return false;
    return counted.every((key) => (waitingPerKey.get(key) ?? 0) < share);
  }

  function release(): void {
    const next = first.shift() ?? others.shift();
    // The place passes straight to the next task, so a newcomer cannot slip in ahead of the queue.
    if (next) {
      add(waitingPerKey, next.counted, -1);
      next.start();
    } else {
      running--;
    }
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
    run(task, runOptions) {
      const keys = runOptions?.keys?.length ? [...runOptions.keys] : [UNKEYED];
      const priority = runOptions?.priority === true;
      if (running < options.concurrency) {
        running++;
        return start(task, undefined);
      }
      const counted = keys.map((key) => `${priority ? "first" : "other"}|${key}`);
      if (!mayWait(counted, priority)) return undefined;
      add(waitingPerKey, counted, 1);
      const admitted = new Promise<void>((resolve) => (priority ? first : others).push({ counted, start: resolve }));
      return start(task, admitted);
    },
    load: () => ({ running, waiting: first.length + others.length }),
  };
}

/**
 * The default number of concurrent password derivations for a process that may use `cores` cores: all but one, so
 * the event loop keeps a core, and at most three, so PBKDF2 leaves one of libuv's four pool threads on Node.
 */
export function defaultPasswordConcurrency(cores: number): number {
  return Math.min(3, Math.max(1, Math.floor(cores) - 1));
}
