// The embedder on PostgreSQL: createApp over openPostgresStore runs on Deno with network and environment access only.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import process from "node:process";
import { postgresTest } from "./helpers/postgres.ts";

const run = promisify(execFile);
const deno = fileURLToPath(new URL("../node_modules/.bin/deno", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/embed_postgres.ts", import.meta.url));

postgresTest("an embedder on Deno with --allow-net --allow-env only issues a token and reads total_count on PostgreSQL", async (db) => {
  const { stdout } = await run(deno, ["run", "--no-prompt", "--allow-net", "--allow-env", "--no-check", fixture], {
    env: { ...process.env, EMBED_DATABASE_URL: db.url, NO_COLOR: "1" },
    timeout: 60_000,
  });
  const seen = JSON.parse(stdout.trim().split("\n").at(-1)!);
  assert.equal(seen.tokenStatus, 200);
  assert.equal(seen.countStatus, 200);
  assert.deepEqual(seen.count, { data: { fields: { total_count: 0 } } });
});
