// A pool whose server goes away, or was never PostgreSQL: answers within a bound, never a hang, and paced redials.
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { findPostgresBinaries, startPostgresCluster } from "../../../scripts/lib/postgres_cluster.ts";
import { classifyStoreFailure } from "../../../src/app/store_failure.ts";
import { createDialPacer } from "../../../src/store/postgres/dial_pacer.ts";
import { openPostgres } from "../../../src/store/postgres/connect.ts";
import { test } from "../../helpers/bounded.ts";
import { postgresTest } from "../../helpers/postgres.ts";

test("the pacer doubles its pause after each useless connection and dials at once after a success", () => {
  const pacer = createDialPacer();
  assert.equal(pacer.pause(), 0);
  const pauses: number[] = [];
  for (let i = 0; i < 8; i++) {
    pacer.dialed(i * 10)(i * 10 + 5); // closed 5 ms after dialling, nothing succeeded
    pauses.push(pacer.pause());
  }
  assert.deepEqual(pauses, [50, 100, 200, 400, 400, 400, 400, 400]);
  pacer.dialed(100)(2_200); // open for over two seconds: of use
  assert.equal(pacer.pause(), 0);
  pacer.dialed(3_000)(3_001);
  const closedLater = pacer.dialed(3_100);
  pacer.succeeded();
  closedLater(3_101);
  assert.equal(pacer.pause(), 0, "a statement succeeded while it was open");
  assert.equal(pacer.attempts(), 11);
});

/** A listener that answers every connection as an HTTP server would, then closes it: not PostgreSQL. */
async function httpPeer(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket: Socket) => {
    count++;
    socket.on("error", () => {});
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => count };
}

test("a URL whose peer is not PostgreSQL fails the open within the connect timeout after a bounded number of dials", async () => {
  const peer = await httpPeer();
  try {
    const started = performance.now();
    await assert.rejects(
      openPostgres(`postgres://fg:hunter2@127.0.0.1:${peer.port}/fieldgate`, { connectTimeoutSeconds: 2 }),
      (error: Error) => {
        assert.equal((error as { code?: unknown }).code, "CONNECT_TIMEOUT");
        assert.match(error.message, /no PostgreSQL answer within 2 s after \d+ connection attempts/);
        assert.ok(!error.message.includes("hunter2"));
        return true;
      },
    );
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 1_900 && elapsed < 4_000, `failed after ${Math.round(elapsed)} ms`);
    // Paced: a few dozen at most where the driver alone dialled hundreds a second.
    const dials = peer.connections();
    assert.ok(dials >= 2 && dials <= 20, `${dials} connections`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(peer.connections(), dials, "no dial after the open failed");
  } finally {
    peer.server.close();
  }
});

test("a URL whose server refuses fails the open at once with one dial", async () => {
  const peer = await httpPeer();
  const port = peer.port;
  await new Promise<void>((resolve) => peer.server.close(() => resolve())); // now a closed port
  const started = performance.now();
  await assert.rejects(openPostgres(`postgres://fg:hunter2@127.0.0.1:${port}/fieldgate`), (error: Error) => {
    assert.equal((error as { code?: unknown }).code, "ECONNREFUSED");
    return true;
  });
  assert.ok(performance.now() - started < 2_000);
});

postgresTest("a pool answers within a second through a server outage and serves again within a second of its return", async () => {
  const bin = findPostgresBinaries();
  if (bin === undefined) return; // postgresTest has said why when there is no PostgreSQL; a URL alone cannot be halted
  const cluster = await startPostgresCluster(bin, { purpose: "outage test" });
  const pg = await openPostgres(cluster.url, { max: 4 });
  try {
    await pg.query("SELECT 1");
    await cluster.halt();
    const outcomes: { ms: number; failure: string | undefined }[] = [];
    const outageEnds = performance.now() + 2_500;
    while (performance.now() < outageEnds) {
      // Light load: a statement and a transaction at once, every 100 ms.
      const started = performance.now();
      const results = await Promise.allSettled([
        pg.query("SELECT 1"),
        pg.transaction((tx) => tx.query("SELECT 1")),
      ]);
      for (const result of results) {
        assert.equal(result.status, "rejected", "nothing succeeds while the server is down");
        const failure = classifyStoreFailure(result.reason);
        outcomes.push({ ms: performance.now() - started, failure: failure?.event });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(outcomes.length >= 10);
    for (const outcome of outcomes) {
      assert.ok(outcome.ms < 1_000, `answered after ${Math.round(outcome.ms)} ms`);
      assert.ok(outcome.failure === "database_unavailable" || outcome.failure === "database_busy", String(outcome.failure));
    }
    await cluster.resume();
    const back = performance.now();
    for (;;) {
      try {
        await pg.query("SELECT 1");
        break;
      } catch {
        assert.ok(performance.now() - back < 1_000, "still refused a second after the server came back");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    assert.ok(performance.now() - back < 1_000);
    const [row] = await pg.transaction((tx) => tx.query<{ one: number }>("SELECT 1 AS one"));
    assert.equal(row?.one, 1);
  } finally {
    await pg.close({ timeoutSeconds: 0 });
  }
});
