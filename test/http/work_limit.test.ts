// The work limit: a few tasks run, a few wait in arrival order, the rest are refused at once.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createWorkLimit, defaultPasswordConcurrency } from "../../src/http/work_limit.ts";

/** A task that runs until the test settles it, recording when it started. */
function heldTask(log: string[], name: string) {
  let settle!: (ok: boolean) => void;
  const done = new Promise<boolean>((resolve) => (settle = resolve));
  const task = async () => {
    log.push(name);
    if (!(await done)) throw new Error(`${name} failed`);
    return name;
  };
  return { task, finish: () => settle(true), fail: () => settle(false) };
}

test("work limit refuses the (concurrency + queue + 1)th task at once without starting it", async () => {
  const limit = createWorkLimit({ concurrency: 2, queue: 3 });
  const log: string[] = [];
  const tasks = Array.from({ length: 6 }, (_, i) => heldTask(log, `t${i}`));
  const runs = tasks.map((t) => limit.run(t.task));
  assert.equal(runs.filter((r) => r === undefined).length, 1);
  assert.equal(runs[5], undefined, "the sixth is the one refused");
  assert.deepEqual(limit.load(), { running: 2, waiting: 3 });
  await Promise.resolve();
  assert.deepEqual(log, ["t0", "t1"], "only the running places started");
  for (const t of tasks.slice(0, 5)) t.finish();
  assert.deepEqual(await Promise.all(runs.slice(0, 5)), ["t0", "t1", "t2", "t3", "t4"]);
  assert.deepEqual(limit.load(), { running: 0, waiting: 0 });
});

test("work limit starts waiting tasks in the order they arrived, each when a place frees", async () => {
  const limit = createWorkLimit({ concurrency: 1, queue: 3 });
  const log: string[] = [];
  const tasks = ["a", "b", "c", "d"].map((name) => heldTask(log, name));
  const runs = tasks.map((t) => limit.run(t.task)!);
  for (let i = 0; i < tasks.length; i++) {
    tasks[i]!.finish();
    await runs[i];
    await Promise.resolve();
    assert.deepEqual(log, ["a", "b", "c", "d"].slice(0, Math.min(i + 2, 4)));
  }
});

test("work limit frees a place when its task throws, and a newcomer does not overtake the queue", async () => {
  const limit = createWorkLimit({ concurrency: 1, queue: 1 });
  const log: string[] = [];
  const first = heldTask(log, "first");
  const second = heldTask(log, "second");
  const running = limit.run(first.task)!;
  const waiting = limit.run(second.task)!;
  first.fail();
  await assert.rejects(running, /first failed/);
  assert.deepEqual(limit.load(), { running: 1, waiting: 0 }, "the freed place went straight to the waiting task");
  const third = heldTask(log, "third");
  const last = limit.run(third.task)!;
  assert.deepEqual(limit.load(), { running: 1, waiting: 1 }, "a newcomer waits behind it");
  second.finish();
  assert.equal(await waiting, "second");
  third.finish();
  assert.equal(await last, "third");
  assert.deepEqual(log, ["first", "second", "third"]);
});

test("work limit with no queue refuses every task beyond the running ones", () => {
  const limit = createWorkLimit({ concurrency: 1, queue: 0 });
  const log: string[] = [];
  assert.ok(limit.run(heldTask(log, "a").task));
  assert.equal(limit.run(heldTask(log, "b").task), undefined);
});

const sizes = [
  { cores: 1, concurrency: 1 },
  { cores: 2, concurrency: 1 },
  { cores: 3, concurrency: 2 },
  { cores: 4, concurrency: 3 },
  { cores: 64, concurrency: 3 },
];

for (const { cores, concurrency } of sizes) {
  test(`password concurrency on ${cores} cores is ${concurrency}`, () => {
    assert.equal(defaultPasswordConcurrency(cores), concurrency);
  });
}

test("work limit refuses a setting that could never run anything", () => {
  assert.throws(() => createWorkLimit({ concurrency: 0, queue: 1 }), RangeError);
  assert.throws(() => createWorkLimit({ concurrency: 1, queue: -1 }), RangeError);
});
