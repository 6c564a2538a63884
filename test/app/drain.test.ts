// The drain: close() waits for the requests in flight, and marks the app closing at once.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createDrain } from "../../src/app/drain.ts";

test("close resolves at once with nothing in flight", async () => {
  const drain = createDrain();
  await drain.close();
  assert.equal(drain.closing, true);
});

test("close waits until the last request in flight leaves", async () => {
  const drain = createDrain();
  drain.enter();
  drain.enter();
  let closed = false;
  const closing = drain.close().then(() => (closed = true));
  assert.equal(drain.closing, true);
  drain.leave();
  await Promise.resolve();
  assert.equal(closed, false);
  drain.leave();
  await closing;
  assert.equal(closed, true);
});
