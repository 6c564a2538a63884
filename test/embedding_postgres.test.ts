// The embedder on PostgreSQL: createApp over openPostgresStore runs on Deno with network and environment access only,
// and apps built that way on one database share what they must (the failure budget) without being told.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import process from "node:process";
import { createApp, loadConfig, openPostgresStore } from "../src/mod.ts";
import { sha256Hex } from "../src/crypto/hash.ts";
import { postgresTest } from "./helpers/postgres.ts";
import { postJson } from "./helpers/requests.ts";

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

postgresTest("two embedders' apps over openPostgresStore on one database, built with no option, spend one failure budget", async (db) => {
  const stores = [await openPostgresStore(db.url), await openPostgresStore(db.url)] as const;
  const config = loadConfig({ FIELDGATE_BASE_URL: "http://embedded.test", FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
  // No option but a quiet log: whether the throttles are shared follows from the store.
  const apps = stores.map((store) => createApp({ config, store, log: () => {} }));
  try {
    const org = await stores[0].organizations.ensure("acme", { name: "Acme", now: 1 });
    const robot = await stores[0].users.insert({ username: "robot@example.com", kind: "integration", now: 1 });
    await stores[0].organizations.addMember(org.id, robot.id, { now: 1 });
    await stores[0].clients.insert({
      clientId: "embedded-job",
      secretHash: await sha256Hex("embedded-secret"),
      name: "Embedded job",
      grantType: "client_credentials",
      redirectUris: [],
      scope: "fields:read",
      integrationUserId: robot.id,
      now: 1,
    });
    const send = async (i: number, secret: string) => (await apps[i % 2]!.fetch(postJson("/oauth/token", {
      grant_type: "client_credentials", client_id: "embedded-job", client_secret: secret,
    }), { remoteAddress: "192.0.2.1" })).status;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await send(i, "wrong"));
    assert.deepEqual(statuses, [401, 401, 401], "three failures spread over the two apps");
    assert.deepEqual([await send(0, "embedded-secret"), await send(1, "embedded-secret")], [429, 429], "the budget is spent on both");
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
});
