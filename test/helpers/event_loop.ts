// Checks that the event loop is still turning while something waits (for SQLite's write lock, a bcrypt thread).
import assert from "node:assert/strict";

/**
 * Fails when a 30 ms timer set now fires 2.5 s late or later. Not a speed claim: a loop stuck in SQLite's busy
 * handler stands still for its whole 5 s timeout, a turning one runs the timer at once, and the bound sits between
 * the two with room for a loaded machine. (A clock-free version passed with the loop blocked, since the waiting
 * write then succeeds 5 s later anyway.)
 */
export async function assertLoopKeepsTurning(): Promise<void> {
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.ok(performance.now() - started < 2_500, `the loop stood still ${performance.now() - started} ms`);
}

/**
 * How many times the event loop ran a macrotask (setImmediate) while `pending` was unsettled. No clock: work on
 * another thread lets it turn thousands of times during a cost-10 bcrypt check, while bcryptjs on this thread lets
 * it in once per 100 ms slice of its own work.
 */
export async function turnsWhile(pending: Promise<unknown>): Promise<number> {
  let settled = false;
  const done = pending.finally(() => {
    settled = true;
  });
  let turns = 0;
  while (!settled) {
    await new Promise((resolve) => setImmediate(resolve));
    turns++;
  }
  await done;
  return turns;
}
