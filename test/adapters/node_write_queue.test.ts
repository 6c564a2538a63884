// The write queue holds each response until the end of the event-loop turn and then writes them all, in order.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createWriteQueue, MAX_HELD_BYTES } from "../../src/adapters/node_write_queue.ts";

const SMALL = 300;

const unexpected = (error: unknown) => assert.fail(`no write should fail: ${String(error)}`);

/** A queue whose flushes run only when the test says the turn ended. */
function manualQueue() {
  const flushes: Array<() => void> = [];
  const queue = createWriteQueue((flush) => flushes.push(flush));
  const endTurn = () => {
    for (const flush of flushes.splice(0)) flush();
  };
  return { queue, flushes, endTurn };
}

test("writes wait for the end of the turn, then all run in the order they were queued, with one flush", () => {
  const { queue, flushes, endTurn } = manualQueue();
  const written: string[] = [];
  queue.write(() => written.push("a"), unexpected, SMALL);
  queue.write(() => written.push("b"), unexpected, SMALL);
  queue.write(() => written.push("c"), unexpected, SMALL);
  assert.deepEqual(written, []);
  assert.equal(flushes.length, 1);
  endTurn();
  assert.deepEqual(written, ["a", "b", "c"]);
});

test("a write queued after a flush waits for the next turn's flush", () => {
  const { queue, flushes, endTurn } = manualQueue();
  const written: string[] = [];
  queue.write(() => written.push("first"), unexpected, SMALL);
  endTurn();
  queue.write(() => written.push("second"), unexpected, SMALL);
  assert.deepEqual(written, ["first"]);
  assert.equal(flushes.length, 1);
  endTurn();
  assert.deepEqual(written, ["first", "second"]);
});

test("a write that throws gets its own error handler, and the writes after it still run", () => {
  const { queue, endTurn } = manualQueue();
  const written: string[] = [];
  const failures: unknown[] = [];
  const boom = new Error("socket gone");
  queue.write(() => written.push("a"), (error) => failures.push(["a", error]), SMALL);
  queue.write(() => {
    throw boom;
  }, (error) => failures.push(["b", error]), SMALL);
  queue.write(() => written.push("c"), (error) => failures.push(["c", error]), SMALL);
  endTurn();
  assert.deepEqual(written, ["a", "c"]);
  assert.deepEqual(failures, [["b", boom]]);
});

test("the default schedule flushes after the current turn's callbacks, not synchronously", async () => {
  const queue = createWriteQueue();
  const written: string[] = [];
  queue.write(() => written.push("queued"), unexpected, SMALL);
  await Promise.resolve();
  assert.deepEqual(written, [], "not flushed by a microtask");
  // Immediates run in the order they were set: by the time this one runs, the queue's flush has.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(written, ["queued"]);
});

test("a response larger than MAX_HELD_BYTES is written at once; smaller ones queued before it still wait", () => {
  const { queue, endTurn } = manualQueue();
  const written: string[] = [];
  queue.write(() => written.push("small"), unexpected, MAX_HELD_BYTES);
  queue.write(() => written.push("large"), unexpected, MAX_HELD_BYTES + 1);
  assert.deepEqual(written, ["large"]);
  endTurn();
  assert.deepEqual(written, ["large", "small"]);
});

test("a large write that throws gets its own error handler too", () => {
  const { queue } = manualQueue();
  const failures: unknown[] = [];
  queue.write(() => {
    throw new Error("gone");
  }, (error) => failures.push(String(error)), MAX_HELD_BYTES + 1);
  assert.deepEqual(failures, ["Error: gone"]);
});
