// The serve command with a fake listener and signal: demo seeding, credential handling, demo mode, shutdown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../src/cli/main.ts";
import type { App } from "../../src/app.ts";
import { cliHarness, type CliHarness } from "./harness.ts";

interface Served {
  code: number;
  stdout: string;
  app: App;
  closed: boolean;
}

async function serveOnce(h: CliHarness, env: Record<string, string> = {}): Promise<Served> {
  let app: App | undefined;
  let closed = false;
  let stop!: (signal: string) => void;
  const deps = h.deps({
    listen: async (served) => {
      app = served;
      return { url: "http://127.0.0.1:1", close: async () => void (closed = true) };
    },
    shutdownSignal: () => new Promise((resolve) => (stop = resolve)),
  });
  deps.env = { ...deps.env, ...env };
  let stdout = "";
  const io = { stdout: (t: string) => void (stdout += t), stderr: () => {}, readStdin: async () => "", isTTY: false };
  const running = runCli(["serve", "--db", h.dbPath, "--port", "0", "--base-url", "http://localhost:8080"], io, deps);
  while (!app) await new Promise((resolve) => setTimeout(resolve, 1));
  // The app answers while running, backed by the opened database.
  assert.equal((await app.fetch(new Request("http://localhost:8080/healthz"))).status, 200);
  stop("SIGTERM");
  return { code: await running, stdout, app, closed };
}

test("serve seeds an empty database once and prints the demo credentials to stdout only", async () => {
  const h = cliHarness();
  const first = await serveOnce(h);
  assert.equal(first.code, 0);
  assert.equal(first.closed, true);
  const credentials = JSON.parse(readFileSync(join(h.dir, "demo-credentials.json"), "utf8"));
  assert.equal(statSync(join(h.dir, "demo-credentials.json")).mode & 0o777, 0o600);
  for (const secret of [credentials.password, credentials.authorizationCodeClient.client_secret, credentials.clientCredentialsClient.client_secret]) {
    assert.ok(first.stdout.includes(secret));
    assert.ok(!JSON.stringify(h.log).includes(secret), "a demo secret reached the log");
  }
  assert.match(first.stdout, /curl -s http:\/\/localhost:8080\/oauth\/token/);
  assert.match(first.stdout, /fields \{ total_count \}/);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 8);
  const second = await serveOnce(h);
  assert.equal(second.stdout, "");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2);
});

test("serve logs listening, shutting_down and stopped, and closes the database", async () => {
  const h = cliHarness();
  const served = await serveOnce(h);
  assert.deepEqual(h.log.map((l) => l.event).filter((e) => e !== "request"), ["demo_seeded", "listening", "shutting_down", "stopped"]);
  assert.equal(h.log.find((l) => l.event === "listening")!.fields.url, "http://127.0.0.1:1");
  assert.equal((await served.app.fetch(new Request("http://localhost:8080/healthz"))).status, 503);
});

test("serve turns demo mode on when the demo credentials file exists", async () => {
  const h = cliHarness();
  await serveOnce(h);
  const served = await serveOnce(h);
  const credentials = JSON.parse(readFileSync(join(h.dir, "demo-credentials.json"), "utf8"));
  assert.equal(served.app.deps.config.demo, true);
  assert.deepEqual(served.app.deps.demo, {
    clientId: credentials.authorizationCodeClient.client_id,
    clientSecret: credentials.authorizationCodeClient.client_secret,
  });
});

test("FIELDGATE_DEMO=false keeps demo mode off despite the credentials file", async () => {
  const h = cliHarness();
  await serveOnce(h);
  const served = await serveOnce(h, { FIELDGATE_DEMO: "false" });
  assert.equal(served.app.deps.config.demo, false);
  assert.equal(served.app.deps.demo, undefined);
});

test("serve does not seed a database that already has organizations", async () => {
  const h = cliHarness();
  await h.run(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const served = await serveOnce(h);
  assert.equal(served.stdout, "");
  assert.equal(existsSync(join(h.dir, "demo-credentials.json")), false);
  assert.equal(served.app.deps.config.demo, false);
});
