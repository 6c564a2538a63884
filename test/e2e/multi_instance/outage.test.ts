// Instances through a PostgreSQL outage: every request answered within a second (503 with Retry-After, never a hang
// or a 500) while the server is down, and served again within a second of its return, without a restart.
import assert from "node:assert/strict";
import { findPostgresBinaries, startPostgresCluster } from "../../../scripts/lib/postgres_cluster.ts";
import { postgresTest } from "../../helpers/postgres.ts";
import { postJson, type Instance } from "../../helpers/instances.ts";
import { withCluster, type Client } from "./fixtures.ts";

/** One light request: a client-credentials token, or the health check; its status, header and latency. */
async function probe(at: Instance, client: Client, kind: "token" | "health") {
  const started = performance.now();
  const res = kind === "token"
    ? await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...client })
    : await fetch(`${at.origin}/healthz`, { signal: AbortSignal.timeout(10_000) }).then(async (r) => {
      await r.arrayBuffer();
      return { status: r.status, headers: r.headers, json: undefined };
    });
  return { at: at.name, kind, status: res.status, retryAfter: res.headers.get("retry-after"), ms: performance.now() - started };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

postgresTest("instances answer 503 within a second through a 10 s PostgreSQL outage and 200 within a second after", async () => {
  const bin = findPostgresBinaries();
  if (bin === undefined) return; // a server given by URL alone cannot be stopped and started here
  const server = await startPostgresCluster(bin, { purpose: "outage test" });
  await withCluster(server.url, async (cluster) => {
    const instances = cluster.all.slice(0, 2);
    for (const at of instances) assert.equal((await probe(at, cluster.sync, "token")).status, 200);
    await server.halt();
    const during: Awaited<ReturnType<typeof probe>>[] = [];
    const downUntil = performance.now() + 10_000;
    while (performance.now() < downUntil) {
      // Light load: a token and a health check on each of two instances every 200 ms.
      const round = instances.flatMap((at) => [probe(at, cluster.sync, "token"), probe(at, cluster.sync, "health")]);
      during.push(...await Promise.all(round));
      await pause(200);
    }
    assert.ok(during.length >= 40, `${during.length} requests`);
    for (const answer of during) {
      assert.equal(answer.status, 503, JSON.stringify(answer));
      assert.ok(answer.ms < 1_000, `answered after ${Math.round(answer.ms)} ms: ${JSON.stringify(answer)}`);
      if (answer.kind === "token") assert.equal(answer.retryAfter, "10", JSON.stringify(answer));
    }
    await server.resume();
    for (const at of instances) {
      const first = performance.now();
      for (;;) {
        const answer = await probe(at, cluster.sync, "token");
        if (answer.status === 200) break;
        assert.equal(answer.status, 503, JSON.stringify(answer));
        assert.ok(performance.now() - first < 1_000, `instance ${at.name} still refuses a second after its first request`);
        await pause(50);
      }
      assert.equal((await probe(at, cluster.sync, "health")).status, 200);
    }
  });
});
