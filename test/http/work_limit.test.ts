// The work limit: a few tasks run, a few wait (a share per key, priority first, each class in arrival order), the rest are refused at once.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createWorkLimit, defaultPasswordConcurrency, queueShares } from "../../src/http/work_limit.ts";
import type { WorkOptions } from "../../src/deps.ts";

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

/** Lets every task that was handed a place start (they start after a few microtask turns). */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

interface Arrival {
  name: string;
  options?: WorkOptions;
}

const ip = (bucket: string, user?: string): WorkOptions => ({ keys: user ? [`ip:${bucket}`, `user:${user}`] : [`ip:${bucket}`] });
const returning = (bucket: string, user?: string): WorkOptions => ({ ...ip(bucket, user), priority: true });

/** Tasks arrive in order; `refused` are turned away at once, the rest start in `order` as places free one at a time. */
const scenarios: { name: string; concurrency: number; queue: number; arrivals: Arrival[]; refused: string[]; order: string[] }[] = [
  {
    name: "refuses the (concurrency + queue + 1)th task of distinct keys without starting it",
    concurrency: 2, queue: 3,
    arrivals: ["a", "b", "c", "d", "e", "f"].map((name) => ({ name, options: ip(name) })),
    refused: ["f"], order: ["a", "b", "c", "d", "e"],
  },
  {
    name: "one address waits in at most its share of the places; the others still find one",
    concurrency: 1, queue: 4,
    arrivals: [
      { name: "x1", options: ip("x") }, { name: "x2", options: ip("x") }, { name: "x3", options: ip("x") },
      { name: "y1", options: ip("y") }, { name: "y2", options: ip("y") }, { name: "z1", options: ip("z") },
    ],
    refused: ["x3", "y2"], order: ["x1", "x2", "y1", "z1"],
  },
  {
    name: "one username waits in at most its share of the places, whatever the addresses",
    concurrency: 1, queue: 4,
    arrivals: [
      { name: "a", options: ip("a", "u") }, { name: "b", options: ip("b", "u") }, { name: "c", options: ip("c", "u") },
      { name: "d", options: ip("d", "v") },
    ],
    refused: ["c"], order: ["a", "b", "d"],
  },
  {
    name: "strangers cannot take the places kept for priority; a priority task waits there and starts first",
    concurrency: 1, queue: 4,
    arrivals: [
      { name: "s0", options: ip("a") }, { name: "s1", options: ip("b") }, { name: "s2", options: ip("c") },
      { name: "s3", options: ip("d") }, { name: "s4", options: ip("e") }, { name: "p1", options: returning("f") },
    ],
    refused: ["s4"], order: ["s0", "p1", "s1", "s2", "s3"],
  },
  {
    name: "priority tasks are served ahead of the others, each class in arrival order",
    concurrency: 1, queue: 8,
    arrivals: [
      { name: "o1", options: ip("a") }, { name: "o2", options: ip("b") }, { name: "p1", options: returning("c") },
      { name: "o3", options: ip("d") }, { name: "p2", options: returning("e") },
    ],
    refused: [], order: ["o1", "p1", "p2", "o2", "o3"],
  },
  {
    name: "shares count per class: a busy address does not hold back a returning browser behind it",
    concurrency: 1, queue: 4,
    arrivals: [
      { name: "o1", options: ip("a", "u") }, { name: "o2", options: ip("a", "v") }, { name: "o3", options: ip("a", "w") },
      { name: "p1", options: returning("a", "u") },
    ],
    refused: ["o3"], order: ["o1", "p1", "o2"],
  },
  {
    name: "priority tasks of one key also wait in at most its share",
    concurrency: 1, queue: 8,
    arrivals: [
      { name: "o1", options: ip("a") }, { name: "p1", options: returning("b", "u") }, { name: "p2", options: returning("c", "u") },
      { name: "p3", options: returning("d", "u") },
    ],
    refused: ["p3"], order: ["o1", "p1", "p2"],
  },
  {
    name: "tasks without keys share one key, so they get one share between them",
    concurrency: 1, queue: 4,
    arrivals: [{ name: "a" }, { name: "b" }, { name: "c" }, { name: "d", options: ip("d") }],
    refused: ["c"], order: ["a", "b", "d"],
  },
  {
    name: "with no queue every task beyond the running ones is refused, priority or not",
    concurrency: 1, queue: 0,
    arrivals: [{ name: "a", options: ip("a") }, { name: "b", options: ip("b") }, { name: "p", options: returning("c") }],
    refused: ["b", "p"], order: ["a"],
  },
];

for (const s of scenarios) {
  test(`work limit: ${s.name}`, async () => {
    const limit = createWorkLimit({ concurrency: s.concurrency, queue: s.queue });
    const log: string[] = [];
    const tasks = new Map(s.arrivals.map(({ name }) => [name, heldTask(log, name)]));
    const runs = new Map(s.arrivals.map(({ name, options }) => [name, limit.run(tasks.get(name)!.task, options)]));
    assert.deepEqual([...runs].filter(([, run]) => run === undefined).map(([name]) => name), s.refused, "refused at once");
    await turns();
    assert.deepEqual(log, s.order.slice(0, s.concurrency), "only the running places started");
    for (let i = 0; i < s.order.length; i++) {
      tasks.get(log[i]!)!.finish();
      await turns();
      assert.deepEqual(log, s.order.slice(0, Math.min(i + 1 + s.concurrency, s.order.length)), `after ${i + 1} settled`);
    }
    assert.deepEqual(await Promise.all(s.order.map((name) => runs.get(name))), s.order);
    assert.deepEqual(limit.load(), { running: 0, waiting: 0 });
  });
}

test("work limit gives a key its waiting share back once its waiting task starts", async () => {
  const limit = createWorkLimit({ concurrency: 1, queue: 4 });
  const log: string[] = [];
  const [a1, a2, a3] = ["a1", "a2", "a3"].map((name) => heldTask(log, name));
  assert.ok(limit.run(a1!.task, ip("a")));
  const second = limit.run(a2!.task, ip("a"));
  assert.equal(limit.run(a3!.task, ip("a")), undefined, "its one waiting place is taken");
  assert.deepEqual(limit.load(), { running: 1, waiting: 1 });
  a1!.finish();
  await turns();
  assert.deepEqual(limit.load(), { running: 1, waiting: 0 });
  const third = limit.run(a3!.task, ip("a"));
  assert.ok(third, "waiting again once a2 runs");
  a2!.finish();
  a3!.finish();
  assert.deepEqual([await second, await third], ["a2", "a3"]);
  assert.deepEqual(limit.load(), { running: 0, waiting: 0 });
});

test("work limit frees a place when its task throws, and a newcomer does not overtake the queue", async () => {
  const limit = createWorkLimit({ concurrency: 1, queue: 1 });
  const log: string[] = [];
  const first = heldTask(log, "first");
  const second = heldTask(log, "second");
  const running = limit.run(first.task, ip("a"))!;
  const waiting = limit.run(second.task, ip("b"))!;
  first.fail();
  await assert.rejects(running, /first failed/);
  assert.deepEqual(limit.load(), { running: 1, waiting: 0 }, "the freed place went straight to the waiting task");
  const third = heldTask(log, "third");
  const last = limit.run(third.task, ip("c"))!;
  assert.deepEqual(limit.load(), { running: 1, waiting: 1 }, "a newcomer waits behind it");
  second.finish();
  assert.equal(await waiting, "second");
  third.finish();
  assert.equal(await last, "third");
  assert.deepEqual(log, ["first", "second", "third"]);
});

const shares = [
  { queue: 0, share: 1, reserved: 0 },
  { queue: 3, share: 1, reserved: 0 },
  { queue: 4, share: 1, reserved: 1 },
  { queue: 16, share: 4, reserved: 4 },
];

for (const { queue, share, reserved } of shares) {
  test(`a queue of ${queue} gives each key ${share} waiting place(s) and keeps ${reserved} for priority`, () => {
    assert.deepEqual(queueShares(queue), { share, reserved });
  });
}

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
