// ThrottleStore.checkClient on PostgreSQL: client authentication as one statement under the gate's counter.
import assert from "node:assert/strict";
import type { ClientAttempt } from "../../../src/store/throttles.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { openInstances } from "../../helpers/postgres_stores.ts";
import { robotClient } from "../../helpers/store_rows.ts";

const at = (now: number) => ({ now, windowSeconds: 60 });
const registered = { key: "failures:client:robot|ip:x", limit: 3 };
const unknown = { key: "failures:ip:x", limit: 30 };

/** An attempt for client `robot` from address x with `digest` (the seeded secret hash is "h-robot"). */
const attempt = (digest: string | undefined, clientId = "robot"): ClientAttempt => ({ clientId, digest, keys: { registered, unknown } });

postgresTest("checkClient: a right secret authenticates and writes no counter; wrong ones count on the client and the address", async (db) => {
  const pg = await openInstances(db.url, { count: 1 });
  try {
    const [store] = pg.stores as [typeof pg.stores[0]];
    await robotClient(store, pg.rows);
    const ok = await store.throttles.checkClient!(attempt("h-robot"), at(100));
    assert.equal(ok.outcome, "authenticated");
    assert.equal(ok.client?.clientId, "robot");
    assert.equal(await store.throttles.count(""), 0, "a success with no failures behind it writes nothing");
    assert.deepEqual(await store.throttles.checkClient!(attempt("h-wrong"), at(100)), { client: ok.client, outcome: "failed", lockout: false });
    assert.deepEqual((await store.throttles.checkClient!(attempt(undefined), at(101))).outcome, "failed", "no secret is a failure");
    assert.equal(await store.throttles.retryAfter([registered], at(101)), 0);
    // The third failure reaches the client's limit: a lockout, after which even the right secret is refused unchecked.
    assert.deepEqual(await store.throttles.checkClient!(attempt("h-wrong"), at(102)), { client: ok.client, outcome: "failed", lockout: true });
    assert.deepEqual(await store.throttles.checkClient!(attempt("h-robot"), at(110)), { client: ok.client, outcome: "refused", wait: 50 });
    assert.equal(await store.throttles.retryAfter([unknown], at(110)), 0, "the address counted 3 of its 30");
    // The window ends: the right secret authenticates and clears the client's failures.
    assert.equal((await store.throttles.checkClient!(attempt("h-robot"), at(160))).outcome, "authenticated");
    for (let i = 0; i < 2; i++) assert.equal((await store.throttles.checkClient!(attempt("h-wrong"), at(161))).outcome, "failed");
    assert.equal((await store.throttles.checkClient!(attempt("h-robot"), at(161))).outcome, "authenticated");
    assert.equal((await store.throttles.checkClient!(attempt("h-wrong"), at(161))).outcome, "failed");
    assert.equal((await store.throttles.checkClient!(attempt("h-wrong"), at(161))).outcome, "failed", "2 + 2 failures, 1 success between");
    assert.equal((await store.throttles.checkClient!(attempt("h-robot"), at(161))).outcome, "authenticated");
  } finally {
    await pg.close();
  }
});

postgresTest("checkClient: an unknown client_id counts on the address only; a disabled client fails like a wrong secret", async (db) => {
  const pg = await openInstances(db.url, { count: 1 });
  try {
    const [store] = pg.stores as [typeof pg.stores[0]];
    const robot = await robotClient(store, pg.rows);
    const unknownId = await store.throttles.checkClient!(attempt("h-robot", "nobody"), at(0));
    assert.deepEqual(unknownId, { client: undefined, outcome: "failed", lockout: false });
    assert.equal(await store.throttles.count("failures:client:"), 0, "no key of its own");
    assert.equal(await store.throttles.count("failures:ip:"), 1);
    await store.clients.setDisabled(robot.clientId, true);
    const disabled = await store.throttles.checkClient!(attempt("h-robot"), at(0));
    assert.equal(disabled.outcome, "failed");
    assert.equal(disabled.client?.disabled, true);
    // Keys no throttle counts (an unknown caller address): checked, nothing written.
    await store.clients.setDisabled(robot.clientId, false);
    const uncounted = { clientId: "robot", digest: "h-wrong", keys: { registered: undefined, unknown: undefined } };
    assert.equal((await store.throttles.checkClient!(uncounted, at(0))).outcome, "failed");
    assert.equal(await store.throttles.count(""), 2);
  } finally {
    await pg.close();
  }
});

postgresTest("checkClient: parallel guesses from two instances are checked one after another, the limit's number told", async (db) => {
  const pg = await openInstances(db.url, { count: 2 });
  try {
    const [one, two] = pg.stores as [typeof pg.stores[0], typeof pg.stores[0]];
    await robotClient(one, pg.rows);
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? one : two).throttles.checkClient!(attempt("h-wrong"), at(0))));
    assert.equal(outcomes.filter((o) => o.outcome === "failed").length, registered.limit);
    assert.equal(outcomes.filter((o) => o.outcome === "refused").length, 40 - registered.limit);
    assert.equal(outcomes.filter((o) => o.outcome === "failed" && o.lockout).length, 1, "one lockout");
    const [row] = await pg.sql.query("SELECT failures FROM throttle_counters WHERE key = $1", [registered.key]);
    assert.equal(Number(row?.failures), 3);
  } finally {
    await pg.close();
  }
});
