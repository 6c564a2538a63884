// `node scripts/run_tests.ts <command> [args…]`: runs a test command (`node --test …`, `deno test …`) with what its
// test files can share instead of each paying for it again:
// - one throwaway PostgreSQL cluster, handed to them as FIELDGATE_TEST_DATABASE_URL. Without it each test file that
//   needs PostgreSQL starts a cluster of its own (initdb and start, about 0.8 s of CPU and 2 to 8 s of waiting, for 26
//   files per runtime). With FIELDGATE_TEST_DATABASE_URL already set, or no PostgreSQL installed, nothing changes,
//   and the tests say what they lack as they always do.
// - Node's compile cache (NODE_COMPILE_CACHE, unless set), so each of the few hundred node processes a run starts
//   (one per test file, and the servers and CLIs the tests spawn) reads compiled code instead of compiling the same
//   modules again: about 0.15 s of CPU per test process. The cache is keyed by source and Node version. Not under
//   c8 (NODE_V8_COVERAGE set): functions loaded from the cache lose their block counts, so branch figures change.
// - DENO_JOBS=4 (unless set) for `deno test --parallel`, as package.json gives `node --test` --test-concurrency=4: the
//   slow files wait on the processes they start (servers, Chromium, PostgreSQL), not on the CPU; two at a time used
//   under 0.7 of one of the two cores (/usr/bin/time over a whole pass).
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { cluster, findPostgres } from "../test/helpers/postgres.ts";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error("usage: node scripts/run_tests.ts <command> [args…]");
  process.exit(2);
}
const env: Record<string, string | undefined> = {
  ...(process.env.NODE_V8_COVERAGE ? {} : { NODE_COMPILE_CACHE: join(tmpdir(), "node-compile-cache") }),
  DENO_JOBS: "4",
  ...process.env,
};
const source = findPostgres(env);
if (source.kind === "binaries") env.FIELDGATE_TEST_DATABASE_URL = (await cluster(source.dir)).url;
const result = spawnSync(command, args, { stdio: "inherit", env });
if (result.error) throw result.error;
// The cluster stops when this process exits (scripts/lib/postgres_cluster.ts).
process.exit(result.status ?? 1);
