// `npm run test:postgres`: the suites built on openTestApp (HTTP, OAuth flows, GraphQL, pages) once more, each app on
// a fresh PostgreSQL database. Without PostgreSQL it says once that they did not run and how to enable them (a
// failure under CI=true), like every other test that needs a system component.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { cluster, findPostgres } from "../test/helpers/postgres.ts";

/** Every test file under `dir` whose app comes from openTestApp, so the backend follows FIELDGATE_TEST_STORE. */
function suitesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".test.ts"))
    .map((path) => join(dir, path))
    .filter((path) => readFileSync(path, "utf8").includes("openTestApp("))
    .sort();
}

const source = findPostgres();
if (source.kind === "missing") {
  console.log(`test:postgres: ${source.note}`);
  process.exit(process.env.CI === "true" ? 1 : 0);
}
const files = suitesUnder("test");
// One cluster for every file, each test still on a database of its own: a cluster per test process cost more
// than the tests.
const url = source.kind === "url" ? source.url : (await cluster(source.dir)).url;
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=4", ...files], {
  stdio: "inherit",
  env: { ...process.env, FIELDGATE_TEST_STORE: "postgres", FIELDGATE_TEST_DATABASE_URL: url },
});
process.exit(result.status ?? 1);
