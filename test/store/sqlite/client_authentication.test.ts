// ThrottleStore.authenticateClient on SQLite and PostgreSQL: client authentication as one step under the gate's counter.
import assert from "node:assert/strict";
import type { ClientAttempt, ClientCheck, Store } from "../../../src/store/contract.ts";
import { openStore } from "../../../src/store/sqlite/store.ts";
import { test } from "../../helpers/bounded.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { openInstances } from "../../helpers/postgres_stores.ts";
import { robotClient, rowsTest, storeRows } from "../../helpers/store_rows.ts";
import { tempDb } from "../../helpers/temp_db.ts";

const at = (now: number) => ({ now, windowSeconds: 60 });
const registered = { key: "failures:client:robot|ip:x", limit: 3 };
const unknown = { key: "failures:ip:x", limit: 30 };

/** An attempt for client `robot` from address x with `digest` (the seeded secret hash is "h-robot"). */
const attempt = (digest: string | undefined, clientId = "robot"): ClientAttempt => ({ clientId, digest, keys: { registered, unknown } });

/** The outcome and, for a failure, whether it started a lockout. */
const summary = (check: ClientCheck) => ({ outcome: check.outcome, lockout: check.outcome === "failed" ? check.lockout : undefined });

rowsTest("authenticateClient: a right secret authenticates and writes no counter; wrong ones count on the client and the address", async (store, rows) => {
  await robotClient(store, rows);
  const ok = await store.throttles.authenticateClient(attempt("h-robot"), at(100));
  assert.equal(ok.outcome, "authenticated");
  assert.equal(ok.client?.clientId, "robot");
  assert.equal(ok.client?.integrationUserEnabled, true);
  assert.equal(await store.throttles.count(""), 0, "a success with no failures behind it writes nothing");
  assert.deepEqual(await store.throttles.authenticateClient(attempt("h-wrong"), at(100)), { client: ok.client, outcome: "failed", lockout: false });
  assert.deepEqual(summary(await store.throttles.authenticateClient(attempt(undefined), at(101))), { outcome: "failed", lockout: false }, "no secret is a failure");
  assert.equal(await store.throttles.retryAfter([registered], at(101)), 0);
  // The third failure reaches the client's limit: a lockout, after which even the right secret is refused unchecked.
  assert.deepEqual(await store.throttles.authenticateClient(attempt("h-wrong"), at(102)), { client: ok.client, outcome: "failed", lockout: true });
  assert.deepEqual(await store.throttles.authenticateClient(attempt("h-robot"), at(110)), { client: ok.client, outcome: "refused", wait: 50 });
  assert.equal(await store.throttles.retryAfter([unknown], at(110)), 0, "the address counted 3 of its 30");
  // The window ends: the right secret authenticates and clears the client's failures.
  assert.equal((await store.throttles.authenticateClient(attempt("h-robot"), at(160))).outcome, "authenticated");
  for (let i = 0; i < 2; i++) assert.equal((await store.throttles.authenticateClient(attempt("h-wrong"), at(161))).outcome, "failed");
  assert.equal((await store.throttles.authenticateClient(attempt("h-robot"), at(161))).outcome, "authenticated");
  assert.equal((await store.throttles.authenticateClient(attempt("h-wrong"), at(161))).outcome, "failed");
  assert.equal((await store.throttles.authenticateClient(attempt("h-wrong"), at(161))).outcome, "failed", "2 + 2 failures, 1 success between");
  assert.equal((await store.throttles.authenticateClient(attempt("h-robot"), at(161))).outcome, "authenticated");
});

rowsTest("authenticateClient: an unknown client_id counts on the address only; a disabled client fails like a wrong secret", async (store, rows) => {
  const robot = await robotClient(store, rows);
  const unknownId = await store.throttles.authenticateClient(attempt("h-robot", "nobody"), at(0));
  assert.deepEqual(unknownId, { client: undefined, outcome: "failed", lockout: false });
  assert.equal(await store.throttles.count("failures:client:"), 0, "no key of its own");
  assert.equal(await store.throttles.count("failures:ip:"), 1);
  await store.clients.setDisabled(robot.clientId, true);
  const disabled = await store.throttles.authenticateClient(attempt("h-robot"), at(0));
  assert.equal(disabled.outcome, "failed");
  assert.equal(disabled.client?.disabled, true);
  // Keys no throttle counts (an unknown caller address): checked, nothing written.
  await store.clients.setDisabled(robot.clientId, false);
  const uncounted = { clientId: "robot", digest: "h-wrong", keys: { registered: undefined, unknown: undefined } };
  assert.equal((await store.throttles.authenticateClient(uncounted, at(0))).outcome, "failed");
  assert.equal((await store.throttles.authenticateClient({ ...uncounted, digest: "h-robot" }, at(0))).outcome, "authenticated");
  assert.equal(await store.throttles.count(""), 2);
});

rowsTest("authenticateClient: an unknown client_id is refused once the address reaches its limit, a registered one is not", async (store, rows) => {
  await robotClient(store, rows);
  const address = { ...unknown, limit: 2 };
  const from = (digest: string, clientId: string): ClientAttempt => ({ clientId, digest, keys: { registered, unknown: address } });
  for (let i = 0; i < 2; i++) assert.equal((await store.throttles.authenticateClient(from("h", `nobody-${i}`), at(0))).outcome, "failed");
  assert.deepEqual(await store.throttles.authenticateClient(from("h", "nobody-else"), at(0)), { client: undefined, outcome: "refused", wait: 60 });
  assert.equal((await store.throttles.authenticateClient(from("h-robot", "robot"), at(0))).outcome, "authenticated");
});

/** Asserts that 40 wrong guesses sent in parallel over two stores on one database had exactly the limit's number told. */
async function assertLimitTold(one: Store, two: Store): Promise<void> {
  const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) =>
    (i % 2 ? one : two).throttles.authenticateClient(attempt("h-wrong"), at(0))));
  assert.equal(outcomes.filter((o) => o.outcome === "failed").length, registered.limit);
  assert.equal(outcomes.filter((o) => o.outcome === "refused").length, 40 - registered.limit);
  assert.equal(outcomes.filter((o) => o.outcome === "failed" && o.lockout).length, 1, "one lockout");
  assert.equal(await one.throttles.retryAfter([registered], at(0)), 60);
}

test("authenticateClient: parallel guesses over two connections to one SQLite file are checked one after another", async () => {
  const db = tempDb("fieldgate-client-auth-");
  const [one, two] = [openStore(db.path), openStore(db.path)];
  try {
    await robotClient(one, storeRows(one));
    await assertLimitTold(one, two);
  } finally {
    await one.close();
    await two.close();
    db.cleanup();
  }
});

postgresTest("authenticateClient: parallel guesses from two instances on PostgreSQL are checked one after another", async (db) => {
  const pg = await openInstances(db.url, { count: 2 });
  try {
    const [one, two] = pg.stores as [Store, Store];
    await robotClient(one, pg.rows);
    await assertLimitTold(one, two);
    const [row] = await pg.sql.query("SELECT failures FROM throttle_counters WHERE key = $1", [registered.key]);
    assert.equal(Number(row?.failures), 3);
  } finally {
    await pg.close();
  }
});
