// bcrypt checks of imported password digests on worker threads, for both runtime adapters (Node: node:worker_threads,
// Deno: a module Web Worker); same answers as crypto/bcrypt.ts verifyBcrypt, the in-thread path an embedder gets by
// default. Each thread runs ./bcrypt_thread.ts.
import { Worker as NodeWorker } from "node:worker_threads";
import type { BcryptService } from "../deps.ts";
import { isVerifiableBcrypt } from "../crypto/bcrypt.ts";

/**
 * What this saves: bcryptjs is JavaScript on the calling thread and yields only every 100 ms, and a check costs about
 * 0.7 s at cost 12 and 3-4 s at cost 14. With eight connections of wrong passwords for one imported cost-12 account,
 * an unrelated token request's median was 291-301 ms in-thread and 30-35 ms on threads, about what the same attack
 * on a native account costs it (scripts/bcrypt_timing.ts, docs/performance.md#bcrypt-checks).
 *
 * The thread's module shares this module's extension (.ts in the sources, .js in the package's dist/); the single
 * executable has no files beside it, so scripts/build_exe.ts puts a data: URL of the bundled module in its place.
 */
const EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf("."));
const THREAD_MODULE = new URL(`./bcrypt_thread${EXTENSION}`, import.meta.url);

/** One check as a thread receives it; the thread answers with a boolean. */
export interface BcryptCheck {
  password: string;
  digest: string;
}

/** A started thread as the pool drives it. */
export interface BcryptEndpoint {
  post(check: BcryptCheck): void;
  terminate(): Promise<void>;
}

/** What a thread reports: an answer to the check in hand, or that it can take no more (crashed, exited). */
export interface BcryptThreadEvents {
  answer(matches: boolean): void;
  fail(error: Error): void;
}

/** Starts one thread; the runtime's way is nodeThread or webThread. */
export type StartBcryptThread = (events: BcryptThreadEvents) => BcryptEndpoint;

/** A node:worker_threads thread, unreferenced: an idle one never keeps the process from exiting. */
export const nodeThread: StartBcryptThread = (events) => {
  const worker = new NodeWorker(THREAD_MODULE);
  worker.unref();
  worker.on("message", (matches: boolean) => events.answer(matches));
  worker.on("error", (error: Error) => events.fail(error));
  worker.on("exit", (code: number) => events.fail(new Error(`bcrypt thread exited with code ${code}`)));
  return { post: (check) => worker.postMessage(check), terminate: async () => void (await worker.terminate()) };
};

/** A module Web Worker (Deno), which keeps the process up until it is terminated. */
export const webThread: StartBcryptThread = (events) => {
  const worker = new Worker(THREAD_MODULE.href, { type: "module" });
  worker.onmessage = (event: MessageEvent<boolean>) => events.answer(event.data);
  worker.onerror = (event: ErrorEvent) => {
    // Handled here: unhandled, a worker's error is thrown again in this thread and ends the process.
    event.preventDefault();
    events.fail(new Error(`bcrypt thread failed: ${event.message}`));
  };
  return { post: (check) => worker.postMessage(check), terminate: async () => worker.terminate() };
};

interface Thread {
  /** False once the thread crashed, exited or was terminated. */
  usable(): boolean;
  check(check: BcryptCheck): Promise<boolean>;
  terminate(): Promise<void>;
}

/** One thread holding at most one check; a failure or terminate() rejects the check in hand. */
function startThread(start: StartBcryptThread): Thread {
  let pending: { resolve(matches: boolean): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  const take = () => {
    const taken = pending;
    pending = undefined;
    return taken;
  };
  const fail = (error: Error) => {
    failure ??= error;
    take()?.reject(error);
  };
  const endpoint = start({ answer: (matches) => take()?.resolve(matches), fail });
  return {
    usable: () => failure === undefined,
    check(check) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        endpoint.post(check);
      });
    },
    async terminate() {
      // A Web Worker reports nothing when terminated, so the check in hand is failed here.
      fail(new Error("bcrypt threads closed"));
      await endpoint.terminate();
    },
  };
}

/**
 * A BcryptService on threads started by `start`. A check takes the spare thread or starts one, so as many run as checks
 * do at once, which the password-work limit bounds (FIELDGATE_PASSWORD_CONCURRENCY). A thread costs about 25 MiB of
 * RSS on Node and checks are rare (an imported digest is replaced at its first successful sign-in), so one at most
 * stays idle. A digest verifyBcrypt would refuse unread is refused without a thread. close() ends every thread and
 * fails checks in hand.
 */
export function createBcryptThreads(start: StartBcryptThread): BcryptService {
  const threads = new Set<Thread>();
  let spare: Thread | undefined;
  let closed = false;

  async function verify(password: string, digest: string): Promise<boolean> {
    if (!isVerifiableBcrypt(digest)) return false;
    if (closed) throw new Error("bcrypt check after close");
    const thread = spare ?? startThread(start);
    spare = undefined;
    threads.add(thread);
    try {
      return await thread.check({ password, digest });
    } finally {
      // A crashed Web Worker may linger, so a thread that failed is ended too.
      if (thread.usable() && !spare) spare = thread;
      else if (threads.delete(thread)) await thread.terminate();
    }
  }

  return {
    verify,
    async close() {
      closed = true;
      const ending = [...threads].map((thread) => thread.terminate());
      threads.clear();
      spare = undefined;
      await Promise.all(ending);
    },
  };
}
