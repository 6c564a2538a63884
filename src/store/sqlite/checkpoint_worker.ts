// The checkpoint thread that checkpoint.ts starts: its own connection to the file, running the checkpoint statements
// it is sent one message at a time and answering with the last one's row.
import { parentPort, workerData } from "node:worker_threads";
import { DatabaseSync } from "node:sqlite";

/** What the thread is started with: the file, and how long its connection waits for a lock. */
export interface CheckpointWorkerData {
  path: string;
  busyMs: number;
}

/** The row PRAGMA wal_checkpoint answers. */
export type CheckpointRow = Record<string, unknown> | undefined;

/** What the thread is sent: statements to run in order, or the end. */
export type CheckpointRequest = { id: number; statements: readonly string[] } | { close: true };

/** What the thread answers for one request: the last statement's row, or why it failed. */
export interface CheckpointReply {
  id: number;
  row?: CheckpointRow;
  error?: string;
}

/** Serves requests on `port` over a connection of its own to `data.path` until told to close. */
function serve(port: NonNullable<typeof parentPort>, data: CheckpointWorkerData): void {
  const db = new DatabaseSync(data.path);
  db.exec(`PRAGMA busy_timeout = ${Math.floor(data.busyMs)}`);
  db.exec("PRAGMA synchronous = NORMAL");
  port.on("message", (message: CheckpointRequest) => {
    if ("close" in message) {
      db.close();
      port.close();
      return;
    }
    const reply: CheckpointReply = { id: message.id };
    try {
      for (const sql of message.statements) reply.row = db.prepare(sql).get();
    } catch (error) {
      reply.error = String(error instanceof Error ? error.message : error);
    }
    port.postMessage(reply);
  });
}

if (parentPort) serve(parentPort, workerData as CheckpointWorkerData);
