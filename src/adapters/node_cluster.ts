// `serve --workers N` on Node: node:cluster forks N copies of the same command line that share one listening socket.
import cluster, { type Worker } from "node:cluster";
import { SHUTDOWN_SIGNALS, type WorkerPool } from "../cli/types.ts";

/**
 * The process's place in a worker pool. Workers share the listening socket and the kernel spreads connections
 * (SCHED_NONE), so the primary never touches a request. The primary restarts nothing: if a worker dies, it stops
 * the others and exits 1, leaving restarts to the supervisor (systemd, a container runtime).
 */
export function nodeWorkerPool(): WorkerPool {
  return {
    index: cluster.isWorker ? cluster.worker!.id : undefined,
    run: (count, options) => runPrimary(count, options?.onListening),
  };
}

function runPrimary(count: number, onListening?: (port: number) => void): Promise<number> {
  // Round robin (the Linux default) would pass every connection through the primary's event loop.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // The workers share one socket, so the first one's port (port 0 resolved by the kernel) is every worker's.
  if (onListening) cluster.once("listening", (_worker, address) => onListening(address.port));
  return new Promise((resolve) => {
    const workers: Worker[] = [];
    let stopping = false;
    let failed = false;
    let alive = count;
    // A message rather than a signal: Ctrl-C already sends SIGINT to every worker, and a second signal would
    // make a worker exit at once instead of finishing its requests.
    // A worker whose channel closes between the check and the send (the signal reached it too, and it is
    // exiting) fails the send with EPIPE: it needs no message, and its exit is counted below. With a callback the
    // failure comes back there instead of as an 'error' event, which nothing else would handle.
    const stop = (signal: NodeJS.Signals) => {
      stopping = true;
      for (const worker of workers) {
        if (!worker.isDead() && worker.isConnected()) worker.send({ shutdown: signal }, () => {});
      }
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
    for (let i = 0; i < count; i++) {
      const worker = cluster.fork();
      workers.push(worker);
      worker.on("exit", (code, signal) => {
        if (!stopping || code !== 0) failed = failed || code !== 0 || signal !== null;
        if (!stopping) stop("SIGTERM");
        if (--alive > 0) return;
        for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
        resolve(failed ? 1 : 0);
      });
    }
  });
}

/** In a worker, resolves with the signal name when the primary asks it to shut down; never resolves elsewhere. */
export function primaryShutdownRequest(): Promise<string> {
  return new Promise((resolve) => {
    if (!cluster.isWorker) return;
    const onMessage = (message: unknown) => {
      const signal = (message as { shutdown?: unknown } | null)?.shutdown;
      if (typeof signal !== "string") return;
      process.off("message", onMessage);
      resolve(signal);
    };
    process.on("message", onMessage);
  });
}

/** A worker closes its channel to the primary when its command is done, so the open channel cannot keep it alive. */
export function leavePool(): void {
  if (cluster.isWorker && process.connected) process.disconnect();
}
