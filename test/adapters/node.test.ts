// Node adapter smoke test: the real node:http listener on 127.0.0.1 port 0, in process, with graceful shutdown.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { Agent, get as httpGet, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { chmodSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../../src/app.ts";
import { runCli } from "../../src/cli/main.ts";
import { listenNode } from "../../src/adapters/serve_node.ts";
import { cliHarness } from "../cli/harness.ts";
import { assertRefusedUploadsAnswered } from "../helpers/oversized_upload.ts";

/** `serve` on 127.0.0.1 and a free port, started through the CLI; resolves once it logged that it listens. */
async function startServe(stdout: (text: string) => void = () => {}) {
  const h = cliHarness();
  let stop!: (signal: string) => void;
  const deps = h.deps({ shutdownSignal: () => new Promise((resolve) => (stop = resolve)) });
  const io = { stdout, stderr: () => {}, readStdin: async () => "", isTTY: false };
  const running = runCli(["serve", "--host", "127.0.0.1", "--port", "0", "--db", h.dbPath], io, deps);
  let listening;
  while (!(listening = h.log.find((l) => l.event === "listening"))) await new Promise((resolve) => setTimeout(resolve, 5));
  return { h, listening, running, stop: (signal: string) => stop(signal) };
}

test("serve on Node answers /healthz on a real socket and shuts down cleanly on a signal", async () => {
  const { h, listening, running, stop } = await startServe();
  const url = String(listening.fields.url);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const res = await fetch(`${url}/healthz`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok" });
  stop("SIGTERM");
  assert.equal(await running, 0);
  await assert.rejects(fetch(`${url}/healthz`));
});

test("serve on Node answers an oversized upload with its whole 413 while the client is still sending", async () => {
  const { h, listening, running, stop } = await startServe();
  try {
    await assertRefusedUploadsAnswered(String(listening.fields.url));
  } finally {
    stop("SIGTERM");
    assert.equal(await running, 0);
  }
});

test("serve on Node with port 0 and no base URL names the bound port in the banner and the metadata", async () => {
  let stdout = "";
  const { listening, running, stop } = await startServe((t) => void (stdout += t));
  const url = String(listening.fields.url);
  const base = `http://localhost:${new URL(url).port}`;
  try {
    assert.equal(listening.fields.base_url, base);
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    assert.equal(metadata.issuer, base);
    assert.equal(metadata.token_endpoint, `${base}/oauth/token`);
    assert.match(stdout, new RegExp(`Sign in at ${base}/`));
    assert.match(stdout, new RegExp(`redirect_uri: +${base}/demo/callback`));
  } finally {
    stop("SIGTERM");
    assert.equal(await running, 0);
  }
});

test("a database serve creates is private: its directory, the file and its -wal and -shm, whatever the umask", async () => {
  const h = cliHarness();
  const dbPath = join(h.dir, "new", "fg.db");
  const previous = process.umask(0o022); // the usual default, which alone would leave everything world-readable
  let stop!: (signal: string) => void;
  const deps = h.deps({ shutdownSignal: () => new Promise((resolve) => (stop = resolve)) });
  const io = { stdout: () => {}, stderr: () => {}, readStdin: async () => "", isTTY: false };
  const running = runCli(["serve", "--host", "127.0.0.1", "--port", "0", "--db", dbPath], io, deps);
  try {
    while (!h.log.some((l) => l.event === "listening")) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(statSync(join(h.dir, "new")).mode & 0o777, 0o700);
    for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) assert.equal(statSync(file).mode & 0o777, 0o600, file);
  } finally {
    stop("SIGTERM");
    assert.equal(await running, 0);
    process.umask(previous);
  }
  // An existing file keeps the mode its operator gave it.
  chmodSync(dbPath, 0o640);
  assert.equal((await h.run(["users", "list", "--db", dbPath])).code, 0);
  assert.equal(statSync(dbPath).mode & 0o777, 0o640);
});

test("a database created through a --db symlink to a missing file is private too", async () => {
  const h = cliHarness();
  const link = join(h.dir, "fg.db");
  symlinkSync(join(h.dir, "target.db"), link);
  const previous = process.umask(0o022);
  try {
    const result = await h.run(["users", "add", "--username", "robot", "--integration", "--org", "acme", "--db", link]);
    assert.equal(result.code, 0, result.stderr);
  } finally {
    process.umask(previous);
  }
  assert.equal(statSync(join(h.dir, "target.db")).mode & 0o777, 0o600);
});

test("the node listener holds requests that arrive while the app is built, then answers them", async () => {
  let finish!: () => void;
  const building = new Promise<void>((resolve) => (finish = resolve));
  let boundPort = 0;
  const app = { fetch: async () => new Response(`built for ${boundPort}`) } as unknown as App;
  let listenerUrl = "";
  const listening = listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async (port) => {
    boundPort = port;
    listenerUrl = `http://127.0.0.1:${port}`;
    await building;
    return app;
  });
  while (!listenerUrl) await new Promise((resolve) => setTimeout(resolve, 5));
  const early = fetch(`${listenerUrl}/healthz`, { headers: { connection: "close" } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  finish();
  const listener = await listening;
  assert.equal(listener.url, listenerUrl);
  assert.equal(await (await early).text(), `built for ${boundPort}`);
  await listener.close();
});

test("the node listener closes its socket when building the app fails", async () => {
  let port = 0;
  await assert.rejects(
    listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async (bound) => {
      port = bound;
      throw new Error("seed failed");
    }),
    /seed failed/,
  );
  assert.ok(port > 0);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});

/** An app whose one request answers "done" only when the test calls release(); inFlight settles when it arrives. */
function heldApp() {
  let release!: () => void;
  let started!: () => void;
  const inFlight = new Promise<void>((resolve) => (started = resolve));
  const app = {
    fetch: async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      return new Response("done");
    },
  } as unknown as App;
  return { app, inFlight, release: () => release() };
}

test("the node listener finishes an in-flight request before close resolves", async () => {
  const { app, inFlight, release } = heldApp();
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async () => app);
  const response = fetch(`${listener.url}/slow`, { headers: { connection: "close" } });
  await inFlight;
  let closed = false;
  const closing = listener.close().then(() => (closed = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(closed, false);
  release();
  assert.equal(await (await response).text(), "done");
  await closing;
  assert.equal(closed, true);
});

test("close ends a keep-alive connection as soon as its in-flight response is sent, not after the keep-alive timeout", async () => {
  const { app, inFlight, release } = heldApp();
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async () => app);
  const agent = new Agent({ keepAlive: true });
  const answered = new Promise<string>((resolve, reject) => {
    httpGet(`${listener.url}/slow`, { agent }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk)).on("end", () => resolve(body));
    }).on("error", reject);
  });
  await inFlight;
  const closing = listener.close();
  release();
  assert.equal(await answered, "done");
  const afterAnswer = Date.now();
  await closing;
  // Not a speed claim: waiting for the keep-alive timeout would take 5 s; closing at once takes milliseconds.
  assert.ok(Date.now() - afterAnswer < 2_000, `closed ${Date.now() - afterAnswer} ms after the answer`);
  agent.destroy();
});

test("close cuts a client that never finishes its request once the grace has passed", async () => {
  const app = { fetch: async (request: Request) => new Response(await request.text()) } as unknown as App;
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 300 }, async () => app);
  const stuck = connect(Number(new URL(listener.url).port), "127.0.0.1");
  stuck.on("error", () => {});
  await new Promise<void>((resolve) => stuck.on("connect", () => resolve()));
  stuck.write("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = Date.now();
  await listener.close();
  // Not a speed claim: without the 300 ms grace, close would wait for the 30 s request timeout.
  assert.ok(Date.now() - started < 2_000, `closed after ${Date.now() - started} ms`);
});

test("a client that stops reading its large response is cut once nothing has moved for the idle time", async () => {
  const big = "x".repeat(32 * 1024 * 1024);
  const app = { fetch: async () => new Response(big) } as unknown as App;
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 1_000, idleMs: 300 }, async () => app);
  try {
    const reader = connect(Number(new URL(listener.url).port), "127.0.0.1");
    reader.on("error", () => {});
    let received = 0;
    reader.on("data", (chunk: Buffer) => (received += chunk.length));
    reader.pause();
    await new Promise<void>((resolve) => reader.on("connect", () => resolve()));
    reader.write("GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    // Once the response has begun (bytes wait unread in the paused socket; on a busy machine that can take a while),
    // several idle times without reading, then read whatever the connection still delivers.
    while (reader.readableLength === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const ended = new Promise<boolean>((resolve) => {
      reader.on("close", () => resolve(true));
      // The bound of this test, not a speed claim: a connection still open keeps delivering the whole body.
      setTimeout(() => resolve(false), 5_000).unref();
    });
    reader.resume();
    assert.equal(await ended, true, "the server ended the connection");
    assert.ok(received < big.length, `received ${received} bytes: the response was cut, not delivered`);
    reader.destroy();
  } finally {
    await listener.close();
  }
});

test("the package's bin (node_bin.ts) runs the CLI on a supported Node", () => {
  const bin = fileURLToPath(new URL("../../src/adapters/node_bin.ts", import.meta.url));
  // The pinned Node, so the test also works when the suite itself runs under Deno.
  const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
  const result = spawnSync(node, [bin, "--help"], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /clients rotate-secret/);
});

test("a credentials file whose write fails keeps its old content: written aside, then renamed into place", async () => {
  const { mkdirSync, readFileSync, statSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const h = cliHarness();
  const deps = h.deps();
  const path = join(h.dir, "fg.db.demo-credentials.json");
  await deps.writePrivateFile(path, "first\n");
  assert.equal(readFileSync(path, "utf8"), "first\n");
  assert.equal(statSync(path).mode & 0o777, 0o600);
  writeFileSync(path, "kept\n");
  // The temporary name is taken by a directory: the write fails as a full disk would make it fail.
  mkdirSync(`${path}.${process.pid}.tmp`);
  await assert.rejects(deps.writePrivateFile(path, "second\n"));
  assert.equal(readFileSync(path, "utf8"), "kept\n", "never left empty or half-written");
});

test("SIGHUP (a closed terminal or SSH session) shuts serve down gracefully, like SIGTERM", async () => {
  const { nodeShutdownSignal } = await import("../../src/adapters/serve_node.ts");
  const { denoShutdownSignal } = await import("../../src/adapters/serve_deno.ts");
  // The runtime's own listener: Deno's signal API under Deno, process.on under Node.
  const requested = "Deno" in globalThis ? denoShutdownSignal() : nodeShutdownSignal();
  // A pending timer keeps the loop turning until the signal arrives (Deno's signal listeners do not hold it).
  const keepAlive = setTimeout(() => {}, 10_000);
  process.kill(process.pid, "SIGHUP");
  try {
    assert.equal(await requested, "SIGHUP");
  } finally {
    clearTimeout(keepAlive);
  }
});

test("a port already in use is refused with a message naming HOST and PORT, on either runtime's listener", async () => {
  const { listenDeno } = await import("../../src/adapters/serve_deno.ts");
  const listen = "Deno" in globalThis ? listenDeno : listenNode;
  const taken = await listen({ port: 0, host: "127.0.0.1", graceMs: 1_000 }, async () => ({ fetch: async () => new Response("x") }) as unknown as App);
  try {
    const port = Number(new URL(taken.url).port);
    let built = false;
    await assert.rejects(
      listen({ port, host: "127.0.0.1", graceMs: 1_000 }, async () => {
        built = true;
        return {} as App;
      }),
      new RegExp(`^Error: cannot listen on HOST 127\\.0\\.0\\.1, PORT ${port}: .*(in use|EADDRINUSE)`, "i"),
    );
    assert.equal(built, false);
  } finally {
    await taken.close();
  }
});

/**
 * Clients that keep `connections` keep-alive connections busy with back-to-back requests until `stop` settles; a
 * refused new connection (the listener stopped accepting) ends a client, as a proxy then goes to another instance.
 */
function keepAliveClients(url: string, connections: number, stop: Promise<unknown>) {
  const outcomes = { answered: 0, closeAnswers: 0, afterStopWithoutClose: 0, refused: 0, reset: [] as string[] };
  let stopped = false;
  void stop.then(() => (stopped = true));
  const one = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 10_000; i++) {
        try {
          const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
            const req = httpRequest(`${url}/x`, { method: "POST", agent, headers: { "content-type": "text/plain" } }, (res) => {
              res.resume().on("end", () => resolve(res.headers)).on("error", reject);
            });
            req.on("error", reject);
            req.end("ping");
          });
          outcomes.answered++;
          if (headers.connection === "close") outcomes.closeAnswers++;
          else if (stopped) outcomes.afterStopWithoutClose++;
        } catch (error) {
          const code = (error as { code?: string }).code ?? String(error);
          if (code === "ECONNREFUSED") {
            outcomes.refused++;
            return;
          }
          outcomes.reset.push(code);
          return;
        }
      }
    } finally {
      agent.destroy();
    }
  };
  return { done: Promise.all(Array.from({ length: connections }, one)), outcomes };
}

test("a shutdown answers every request on kept-alive connections with Connection: close and resets none", async () => {
  const app = { fetch: async (request: Request) => new Response(await request.text()) } as unknown as App;
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async () => app);
  let signal!: () => void;
  const signalled = new Promise<void>((resolve) => (signal = resolve));
  const clients = keepAliveClients(listener.url, 4, signalled);
  await new Promise((resolve) => setTimeout(resolve, 300));
  signal();
  await listener.close();
  await clients.done;
  const { outcomes } = clients;
  assert.deepEqual(outcomes.reset, [], "no request that reached the instance is reset");
  assert.ok(outcomes.answered > 20, `${outcomes.answered} answered`);
  // A response already on its way when the signal came could not say close; at most one per connection.
  assert.ok(outcomes.afterStopWithoutClose <= 4, `${outcomes.afterStopWithoutClose} answers after the signal kept their connection`);
  assert.equal(outcomes.closeAnswers, 4, "each connection's next answer said close, and the client went elsewhere");
  assert.equal(outcomes.refused, 4, "each client then found the listener gone, as a proxy would");
});

test("a shutdown closes a kept-alive connection that stays idle after a second, well before the keep-alive timeout", async () => {
  const app = { fetch: async () => new Response("ok") } as unknown as App;
  const listener = await listenNode({ port: 0, host: "127.0.0.1", graceMs: 10_000 }, async () => app);
  const agent = new Agent({ keepAlive: true });
  const first = await new Promise<string | undefined>((resolve, reject) => {
    httpGet(`${listener.url}/x`, { agent }, (res) => res.resume().on("end", () => resolve(res.headers.connection))).on("error", reject);
  });
  assert.equal(first, "keep-alive");
  const started = Date.now();
  await listener.close();
  // Not a speed claim: node:http would keep the idle connection for its 5 s keep-alive timeout.
  assert.ok(Date.now() - started < 3_000, `closed after ${Date.now() - started} ms`);
  agent.destroy();
});
