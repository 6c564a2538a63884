// The body of one bcrypt thread that adapters/bcrypt_threads.ts starts: answers each check with crypto/bcrypt.ts.
import { parentPort } from "node:worker_threads";
import { verifyBcrypt } from "../crypto/bcrypt.ts";
import type { BcryptCheck } from "./bcrypt_threads.ts";

// A failure is not caught: it ends the thread, and the pool fails the check in hand and starts another next time.
if (parentPort) {
  const port = parentPort;
  port.on("message", async (check: BcryptCheck) => port.postMessage(await verifyBcrypt(check.password, check.digest)));
} else {
  // A Web Worker (Deno), where node:worker_threads has no parent port: the global scope is the port.
  const scope = globalThis as unknown as {
    onmessage: (event: MessageEvent<BcryptCheck>) => void;
    postMessage(matches: boolean): void;
  };
  scope.onmessage = async (event) => scope.postMessage(await verifyBcrypt(event.data.password, event.data.digest));
}
