// Tests that need a program `npm install` does not bring (a browser, a database server): run when it is there,
// otherwise reported once as not run, with how to get it, and failed instead under CI=true.
import { statSync } from "node:fs";
import { delimiter, join } from "node:path";
import process from "node:process";
import { test } from "./bounded.ts";

/**
 * What `probe` finds (a path, a version) when the machine has the component; otherwise undefined, after registering
 * one test that says so: skipped, since a fresh clone's `npm test` must pass without it, or failing under CI=true,
 * so that CI never goes green without running the tests that need it.
 */
export function requireComponent<T>(name: string, probe: () => T | undefined, howToEnable: string): T | undefined {
  const found = probe();
  if (found !== undefined) return found;
  // The name carries the whole message: Deno's reporter shows a skipped test's name but not its reason.
  const message = `${name} not found, so the tests that need it did not run (${howToEnable})`;
  if (process.env.CI === "true") {
    test(`${name} is required under CI=true`, () => {
      throw new Error(message);
    });
  } else {
    test(message, { skip: `${name} not found` }, () => {});
  }
  return undefined;
}

/** `override` when set (and only it), else the first `command` on PATH; either counts only as an executable file. */
export function findExecutable(override: string | undefined, command: string): string | undefined {
  const candidates = override ? [override] : (process.env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, command));
  return candidates.find((path) => {
    // A binary hidden behind a bind-mounted /dev/null (a character device) or a directory is not a program.
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat !== undefined && stat.isFile() && (stat.mode & 0o111) !== 0;
  });
}
