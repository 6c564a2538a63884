// Server secrets on PostgreSQL: every instance gets the one row that won, however their first calls interleave.
import assert from "node:assert/strict";
import { postgresTest } from "../../helpers/postgres.ts";
import { holdTransaction, untilSomeoneWaitsForALock, withPgStore } from "../../helpers/pg_rows.ts";

postgresTest("ensure from two stores on one database at once returns the same secret", async ({ url }) => {
  await withPgStore(url, (first) =>
    withPgStore(url, async (second) => {
      const calls = ["a", "b", "c"].flatMap((name) =>
        [first, second, first, second].map((store, i) => store.secrets.ensure(name, `${name}-${i}`, 1))
      );
      const got = await Promise.all(calls);
      for (let n = 0; n < 3; n++) {
        const values = new Set(got.slice(n * 4, n * 4 + 4));
        assert.equal(values.size, 1, "one secret per name");
        assert.equal(await second.secrets.ensure(["a", "b", "c"][n]!, "late", 2), [...values][0]);
      }
    }));
});

postgresTest("ensure that meets another instance's insert in flight waits for it and returns its secret", async ({ url }) => {
  await withPgStore(url, async (store, pg) => {
    const other = holdTransaction(pg, [["INSERT INTO server_secrets (name, value, created_at) VALUES ('k', 'theirs', 1)"]]);
    await other.taken;
    const mine = store.secrets.ensure("k", "mine", 2);
    await untilSomeoneWaitsForALock(pg);
    other.release();
    await other.done;
    assert.equal(await mine, "theirs");
  });
});

