/**
 * node:test's `test`, with a bound on every test.
 *
 * Neither runtime bounds a test by default, so a regression that leaves a promise pending (a throttle slot never
 * settled, a lock never released) stalls the whole suite, and CI, without naming the test. Deno has no
 * `--test-timeout`, but both runtimes honour the `timeout` option, so every test file imports `test` from here.
 * The slowest test takes about 2 s alone; the bound leaves room for a loaded machine and coverage.
 * Both runners now give this file as a failing test's location; the error's stack still names the test file's line.
 */
import { test as nodeTest, type TestFn, type TestOptions } from "node:test";

export const TEST_TIMEOUT_MS = 60_000;

export function test(name: string, fn: TestFn): Promise<void>;
export function test(name: string, options: TestOptions, fn: TestFn): Promise<void>;
export function test(name: string, optionsOrFn: TestOptions | TestFn, maybeFn?: TestFn): Promise<void> {
  const [options, fn] = typeof optionsOrFn === "function" ? [{}, optionsOrFn] : [optionsOrFn, maybeFn!];
  return nodeTest(name, { timeout: TEST_TIMEOUT_MS, ...options }, fn);
}
