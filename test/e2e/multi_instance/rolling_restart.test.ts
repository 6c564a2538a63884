// A rolling restart behind two instances: keep-alive clients lose no request when one instance gets SIGTERM.
import assert from "node:assert/strict";
import { Agent, request as httpRequest } from "node:http";
import { postgresTest } from "../../helpers/postgres.ts";
import { withCluster, type Client } from "./fixtures.ts";

/** One token request on a kept-alive connection; the status and whether the answer closed the connection. */
function tokenOn(origin: string, agent: Agent, client: Client): Promise<{ status: number; closes: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/oauth/token`, { method: "POST", agent, headers: { "content-type": "application/json" }, timeout: 10_000 }, (res) => {
      res.resume().on("end", () => resolve({ status: res.statusCode ?? 0, closes: res.headers.connection === "close" }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(JSON.stringify({ grant_type: "client_credentials", ...client }));
  });
}

postgresTest("SIGTERM to one of two instances under keep-alive load resets no request and loses none", async (db) => {
  await withCluster(db.url, async (cluster) => {
    const [a, b] = cluster.all as [typeof cluster.a, typeof cluster.b];
    const outcomes = { ok: 0, failed: [] as string[], movedToB: 0, closeAnswers: 0 };
    let stopping = false;
    // Four keep-alive connections to A; a new connection A refuses goes to B, as a proxy retries a refused connect.
    const client = async () => {
      const agents = { a: new Agent({ keepAlive: true, maxSockets: 1 }), b: new Agent({ keepAlive: true, maxSockets: 1 }) };
      let target: "a" | "b" = "a";
      try {
        // Until the clients have gone on at B for a while (bounded in count either way).
        for (let i = 0; i < 2_000 && outcomes.movedToB < 40; i++) {
          try {
            const answer = await tokenOn(target === "a" ? a.origin : b.origin, agents[target], cluster.sync);
            if (answer.status === 200) outcomes.ok++;
            else outcomes.failed.push(`status ${answer.status}`);
            if (answer.closes) outcomes.closeAnswers++;
            if (target === "b") outcomes.movedToB++;
          } catch (error) {
            const code = (error as { code?: string }).code ?? String(error);
            if (target === "a" && stopping && code === "ECONNREFUSED") {
              target = "b";
              continue;
            }
            outcomes.failed.push(code);
          }
        }
      } finally {
        agents.a.destroy();
        agents.b.destroy();
      }
    };
    const clients = Promise.all([client(), client(), client(), client()]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopping = true;
    await a.stop();
    await clients;
    assert.deepEqual(outcomes.failed, [], "no request reset or refused after it reached an instance");
    assert.ok(outcomes.ok > 40, `${outcomes.ok} tokens`);
    assert.ok(outcomes.movedToB > 0, "the clients went on at B");
    // Node's listener says so in its last answers; Deno.serve's shutdown ends connections without the header (and,
    // held to the rule above, without a reset).
    if (!("Deno" in globalThis)) assert.ok(outcomes.closeAnswers >= 1, "A's last answers closed their connections");
  });
});
