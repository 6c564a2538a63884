// bcrypt checks on threads: the same answers as bcryptjs in this thread, the event loop free meanwhile, and threads
// reused, replaced after a failure and ended by close().
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import {
  createBcryptThreads, nodeThread, webThread, type BcryptCheck, type BcryptThreadEvents, type StartBcryptThread,
} from "../../src/adapters/bcrypt_threads.ts";
import { verifyBcrypt } from "../../src/crypto/bcrypt.ts";
import type { CliDeps } from "../../src/cli/types.ts";
import { turnsWhile } from "../helpers/event_loop.ts";

const onDeno = "Deno" in globalThis;
/** The thread this runtime's adapter starts. */
const runtimeThread = onDeno ? webThread : nodeThread;

const TEN_ROUNDS = { password: "ten rounds", digest: "$2b$10$f88DVYfb6S6PYbMGUddRNOyEiB6DeNFZ3vMR5sKJr8RN1ZmmXMvlG" };
const FOUR_ROUNDS = "$2b$04$bZO4TTTOG1aAP9xGTuAjgu7KcXuf9SQJOZyNvf7pUUPnnoe/hSeNG";
const LONG = "$2b$04$rXFV/4BQTHcejWacWpydd.ARAkTR0lpnGRkubMGQu5hga8jABj2ZW";
const UNICODE = "$2b$04$D20Szf2RdM5YOgMfqgu7YuEzLSCIRlj5vfwsZCC36dRoTmd3qWubm";

// The first five are jBCrypt's published test vectors (cost 6, $2a$); the rest were made by bcryptjs.
const knownAnswers: Array<{ name: string; password: string; digest: string; matches: boolean }> = [
  { name: "an empty password", password: "", digest: "$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s.", matches: true },
  { name: "one letter", password: "a", digest: "$2a$06$m0CrhHm10qJ3lXRY.5zDGO3rS2KdeeWLuGmsfGlMfOxih58VYVfxe", matches: true },
  { name: "the alphabet", password: "abcdefghijklmnopqrstuvwxyz", digest: "$2a$06$.rCVZVOThsIa97pEDOxvGuRRgzG64bvtJ0938xuqzv18d3ZpQhstC", matches: true },
  { name: "punctuation and spaces", password: "~!@#$%^&*()      ~!@#$%^&*()PNBFRD", digest: "$2a$06$fPIsBO8qRqkjj273rfaOI.HtSV9jLDpTbZn782DC6/t7qT67P6FfO", matches: true },
  { name: "a wrong password for a published vector", password: "abd", digest: "$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i", matches: false },
  { name: "a $2b$ digest", password: "four rounds only", digest: FOUR_ROUNDS, matches: true },
  { name: "the same digest as $2a$", password: "four rounds only", digest: FOUR_ROUNDS.replace("$2b$", "$2a$"), matches: true },
  { name: "the same digest as $2y$", password: "four rounds only", digest: FOUR_ROUNDS.replace("$2b$", "$2y$"), matches: true },
  { name: "a password differing in case", password: "Four rounds only", digest: FOUR_ROUNDS, matches: false },
  { name: "multi-byte UTF-8", password: "pässwörd ✓ ünïcode", digest: UNICODE, matches: true },
  { name: "multi-byte UTF-8, one accent off", password: "passwörd ✓ ünïcode", digest: UNICODE, matches: false },
  { name: "a different tail after 72 bytes (bcrypt reads no further)", password: "x".repeat(72) + "other tail", digest: LONG, matches: true },
  { name: "a password one byte short of 72 bytes", password: "x".repeat(71), digest: LONG, matches: false },
  { name: "a cost above 14, refused unread", password: "x", digest: "$2b$15$nx0cv58o9C8uXTclEjKVmOoghEX6IOso47JR9XJHDgO.AmdZS7zuW", matches: false },
];

for (const row of knownAnswers) {
  test(`a bcrypt thread answers like bcryptjs in this thread for ${row.name}`, async () => {
    const threads = createBcryptThreads(runtimeThread);
    try {
      assert.equal(await threads.verify(row.password, row.digest), row.matches);
      assert.equal(await verifyBcrypt(row.password, row.digest), row.matches);
    } finally {
      await threads.close();
    }
  });
}

test("the event loop keeps turning while a cost-10 check runs on a thread", async () => {
  const threads = createBcryptThreads(runtimeThread);
  try {
    await threads.verify("warm", FOUR_ROUNDS); // the thread is started and its module loaded
    const turns = await turnsWhile(threads.verify(TEN_ROUNDS.password, TEN_ROUNDS.digest));
    assert.ok(turns >= 100, `the loop turned only ${turns} times during the check`);
  } finally {
    await threads.close();
  }
});

test("the measure above tells: bcryptjs on this thread lets the loop turn only once per 100 ms slice", async () => {
  const turns = await turnsWhile(verifyBcrypt(TEN_ROUNDS.password, TEN_ROUNDS.digest));
  assert.ok(turns < 100, `the loop turned ${turns} times`);
});

test("this runtime's adapter gives serve bcrypt threads", async () => {
  const cliDeps: CliDeps = onDeno
    ? (await import("../../src/adapters/serve_deno.ts")).createDenoDeps({})
    : (await import("../../src/adapters/serve_node.ts")).createNodeDeps({});
  const threads = cliDeps.bcrypt?.();
  assert.ok(threads, "CliDeps.bcrypt is set");
  try {
    const checking = threads.verify(TEN_ROUNDS.password, TEN_ROUNDS.digest);
    assert.ok((await turnsWhile(checking)) >= 100);
    assert.equal(await checking, true);
  } finally {
    await threads.close();
  }
});

test("a check that throws on its thread fails, and the next check gets a fresh thread", async () => {
  const threads = createBcryptThreads(runtimeThread);
  try {
    // bcryptjs throws for a password that is not a string; the pool never sends one, so this stands for any crash.
    await assert.rejects(threads.verify(undefined as unknown as string, FOUR_ROUNDS));
    assert.equal(await threads.verify("four rounds only", FOUR_ROUNDS), true);
  } finally {
    await threads.close();
  }
});

test("close() ends the runtime's real threads, and a check in hand fails instead of hanging", async () => {
  let ended = 0;
  const exits: Error[] = [];
  const start: StartBcryptThread = (events) => {
    const endpoint = runtimeThread({ answer: events.answer, fail: (error) => (exits.push(error), events.fail(error)) });
    return { post: endpoint.post, terminate: async () => (await endpoint.terminate(), void ended++) };
  };
  const threads = createBcryptThreads(start);
  assert.deepEqual(await Promise.all([threads.verify("a", FOUR_ROUNDS), threads.verify("b", FOUR_ROUNDS)]), [false, false]);
  const inHand = assert.rejects(threads.verify(TEN_ROUNDS.password, TEN_ROUNDS.digest), /closed/);
  await threads.close();
  await inHand;
  assert.equal(ended, 2, "both threads terminated");
  // A Node worker also reports its exit; a Web Worker reports nothing, which is why close() fails the check itself.
  if (!onDeno) assert.equal(exits.filter((e) => /exited/.test(e.message)).length, 2);
});

/** Threads that only record what they are sent; the test answers or fails them through `events`. */
function fakeThreads() {
  const started: Array<{ events: BcryptThreadEvents; posted: BcryptCheck[]; terminated: boolean }> = [];
  const start: StartBcryptThread = (events) => {
    const thread = { events, posted: [] as BcryptCheck[], terminated: false };
    started.push(thread);
    return { post: (check) => void thread.posted.push(check), terminate: async () => void (thread.terminated = true) };
  };
  return { start, started };
}

test("a digest fieldgate will not verify is refused without starting a thread", async () => {
  const fake = fakeThreads();
  const threads = createBcryptThreads(fake.start);
  assert.equal(await threads.verify("x", "$2b$03$r39fg.qTAlyxdOv39spsh.0fRNULhXDcOtHormXWNwnyuwK8eWcn2"), false);
  assert.equal(await threads.verify("x", "pbkdf2-sha256$1000$AAAA$BBBB"), false);
  assert.equal(fake.started.length, 0);
});

test("checks at once get a thread each; one thread stays for later checks, the others end", async () => {
  const fake = fakeThreads();
  const threads = createBcryptThreads(fake.start);
  const first = threads.verify("one", FOUR_ROUNDS);
  const second = threads.verify("two", FOUR_ROUNDS);
  assert.equal(fake.started.length, 2);
  assert.deepEqual(fake.started.map((t) => t.posted.map((c) => c.password)), [["one"], ["two"]]);
  fake.started[0]!.events.answer(true);
  fake.started[1]!.events.answer(false);
  assert.deepEqual(await Promise.all([first, second]), [true, false]);
  assert.deepEqual(fake.started.map((t) => t.terminated), [false, true], "the first to finish stays, the second ends");
  const third = threads.verify("three", FOUR_ROUNDS);
  assert.equal(fake.started.length, 2, "no new thread");
  assert.deepEqual(fake.started[0]!.posted.map((c) => c.password), ["one", "three"]);
  fake.started[0]!.events.answer(true);
  assert.equal(await third, true);
});

test("a thread that fails fails the check in hand, is ended and is not used again", async () => {
  const fake = fakeThreads();
  const threads = createBcryptThreads(fake.start);
  const checking = threads.verify("one", FOUR_ROUNDS);
  fake.started[0]!.events.fail(new Error("thread exited"));
  await assert.rejects(checking, /thread exited/);
  assert.equal(fake.started[0]!.terminated, true, "ended, in case it still runs");
  const next = threads.verify("two", FOUR_ROUNDS);
  assert.equal(fake.started.length, 2);
  fake.started[1]!.events.answer(true);
  assert.equal(await next, true);
});

test("close() ends idle and busy threads, fails the check in hand and refuses later checks", async () => {
  const fake = fakeThreads();
  const threads = createBcryptThreads(fake.start);
  const done = threads.verify("one", FOUR_ROUNDS);
  const inHand = threads.verify("two", FOUR_ROUNDS);
  fake.started[0]!.events.answer(false);
  await done;
  await threads.close();
  assert.deepEqual(fake.started.map((t) => t.terminated), [true, true], "the spare thread and the busy one");
  await assert.rejects(inHand, /closed/);
  await assert.rejects(threads.verify("three", FOUR_ROUNDS), /after close/);
  assert.equal(fake.started.length, 2, "no thread started after close");
});
