// Three `serve` instances over one PostgreSQL database under concurrent requests: single-use credentials have one
// winner across instances, and losing an instance loses no acknowledged token.
import assert from "node:assert/strict";
import { postgresTest } from "../../helpers/postgres.ts";
import { countFields, postJson, type Instance } from "../../helpers/instances.ts";
import { codeAcross, exchange, isActiveAt, refresh, withCluster, type Cluster } from "./fixtures.ts";

const RACERS = 50;

/** `RACERS` copies of one request at once, dealt over the instances in turn. */
function race<T>(cluster: Cluster, send: (at: Instance) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: RACERS }, (_, i) => send(cluster.all[i % cluster.all.length]!)));
}

/** Exactly one answer is 200; every other is 400 invalid_grant. Returns the winner's body. */
function oneWinner(results: { status: number; json: Record<string, unknown> | undefined }[]): Record<string, unknown> {
  const winners = results.filter((r) => r.status === 200);
  assert.equal(winners.length, 1, `statuses: ${results.map((r) => r.status).join(" ")}`);
  for (const loser of results.filter((r) => r.status !== 200)) {
    assert.equal(loser.status, 400);
    assert.equal(loser.json?.error, "invalid_grant");
  }
  return winners[0]!.json!;
}

postgresTest(`${RACERS} concurrent exchanges of one code over three instances: one winner, and the replays revoke its tokens`, async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const code = await codeAcross(cluster, { form: a, signIn: a, consent: b, approve: c });
    const winner = oneWinner(await race(cluster, (at) => exchange(at, cluster, code)));
    // RFC 6749 §4.1.2: a code presented twice revokes the tokens issued for it, on every instance.
    for (const at of cluster.all) {
      assert.equal(await isActiveAt(at, cluster.web, winner.access_token as string), false, `access token on ${at.name}`);
    }
    const reused = await refresh(a, cluster, winner.refresh_token as string);
    assert.equal(reused.json?.error, "invalid_grant");
  });
});

postgresTest(`${RACERS} concurrent refreshes of one token over three instances: one winner, and the replays revoke the family`, async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const pair = await exchange(c, cluster, await codeAcross(cluster, { form: a, signIn: b, consent: c, approve: a }));
    assert.equal(pair.status, 200);
    const winner = oneWinner(await race(cluster, (at) => refresh(at, cluster, pair.json!.refresh_token as string)));
    for (const at of cluster.all) {
      for (const token of [pair.json!.access_token, winner.access_token] as string[]) {
        assert.equal(await isActiveAt(at, cluster.web, token), false, `family access token on ${at.name}`);
      }
    }
    const next = await refresh(b, cluster, winner.refresh_token as string);
    assert.equal(next.json?.error, "invalid_grant", "the winner's new refresh token went with its family");
  });
});

/** Tokens to acknowledge before the kill, and per surviving instance after it; and a bound on requests per worker. */
const BEFORE_KILL = 60;
const AFTER_KILL = 40;
const WORKER_BOUND = 150;
const WORKERS_PER_INSTANCE = 4;

postgresTest("kill -9 of one instance under load: the others keep answering and every acknowledged token stays active", async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const acknowledged: { token: string; on: string }[] = [];
    const afterKill = new Map<string, number>();
    const failures: string[] = [];
    let killing: Promise<void> | undefined;
    const done = () => killing !== undefined && [a, b].every((at) => (afterKill.get(at.name) ?? 0) >= AFTER_KILL);
    const worker = async (at: Instance) => {
      for (let i = 0; i < WORKER_BOUND && !done(); i++) {
        const killed = killing !== undefined;
        let res;
        try {
          res = await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...cluster.sync });
        } catch (error) {
          // The killed instance's connections fail: its worker stops; any other failure is the test's.
          if (at === c && killing !== undefined) return;
          failures.push(`${at.name}: ${(error as Error).message}`);
          return;
        }
        if (res.status !== 200) {
          failures.push(`${at.name}: ${res.status} ${JSON.stringify(res.json)}`);
          continue;
        }
        acknowledged.push({ token: res.json!.access_token as string, on: at.name });
        if (killed) afterKill.set(at.name, (afterKill.get(at.name) ?? 0) + 1);
        if (acknowledged.length >= BEFORE_KILL) killing ??= c.kill9();
      }
    };
    await Promise.all(cluster.all.flatMap((at) => Array.from({ length: WORKERS_PER_INSTANCE }, () => worker(at))));
    await killing;
    assert.deepEqual(failures, []);
    assert.equal(c.alive(), false, "C was killed");
    for (const at of [a, b]) assert.ok((afterKill.get(at.name) ?? 0) >= AFTER_KILL, `${at.name} answered after the kill`);
    assert.ok(acknowledged.some((t) => t.on === "C"), "C acknowledged tokens before it was killed");
    // Checked on the survivors, eight at a time.
    const inactive: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 8) {
      await Promise.all(acknowledged.slice(i, i + 8).map(async ({ token, on }, j) => {
        const at = (i + j) % 2 === 0 ? a : b;
        if (!(await isActiveAt(at, cluster.sync, token))) inactive.push(`from ${on}, checked on ${at.name}`);
      }));
    }
    assert.deepEqual(inactive, [], `${inactive.length} of ${acknowledged.length} acknowledged tokens inactive`);
    assert.equal((await countFields(b.origin, acknowledged[0]!.token)).status, 200);
  });
});
