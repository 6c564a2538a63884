// Worker for the concurrent-open test: opens (creating and migrating) the database at workerData.path once.
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../../../src/store/sqlite/database.ts";

try {
  openDatabase((workerData as { path: string }).path).close();
  parentPort!.postMessage("ok");
} catch (error) {
  parentPort!.postMessage(error instanceof Error ? error.message : String(error));
}
