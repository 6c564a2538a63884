// The serve command with a fake listener and signal: demo seeding, credential handling, demo mode, shutdown.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { readFileSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../../src/cli/main.ts";
import type { App } from "../../src/app.ts";
import type { CliDeps } from "../../src/cli/types.ts";
import { cliHarness, type CliHarness } from "./harness.ts";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.ts";
import { syncSha256Hex } from "../../src/adapters/sync_digest.ts";
import { syncHmacSha256Base64Url } from "../../src/adapters/sync_hmac.ts";
import { deferredText, lightTextResponse } from "../../src/adapters/light_response.ts";

interface Served {
  code: number;
  stdout: string;
  app: App;
  closed: boolean;
}

/** The port the fake listener reports as bound when the command asks for port 0. */
const FAKE_BOUND_PORT = 43_123;

async function serveOnce(
  h: CliHarness,
  env: Record<string, string> = {},
  args = ["--port", "0", "--base-url", "http://localhost:8080"],
  whileServing: (app: App) => Promise<void> = async () => {},
  overrides: Partial<CliDeps> = {},
): Promise<Served> {
  let app: App | undefined;
  let closed = false;
  let stop!: (signal: string) => void;
  const deps = h.deps({
    ...overrides,
    listen: async (options, build) => {
      app = await build(options.port === 0 ? FAKE_BOUND_PORT : options.port);
      return { url: `http://127.0.0.1:${options.port === 0 ? FAKE_BOUND_PORT : options.port}`, close: async () => void (closed = true) };
    },
    shutdownSignal: () => new Promise((resolve) => (stop = resolve)),
  });
  deps.env = { ...deps.env, ...env };
  let stdout = "";
  const io = { stdout: (t: string) => void (stdout += t), stderr: () => {}, readStdin: async () => "", isTTY: false };
  const running = runCli(["serve", "--db", h.dbPath, ...args], io, deps);
  while (!app) await new Promise((resolve) => setTimeout(resolve, 1));
  // The app answers while running, backed by the opened database.
  assert.equal((await app.fetch(new Request("http://localhost:8080/healthz"), { remoteAddress: "127.0.0.1" })).status, 200);
  await whileServing(app);
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
  // A later start points at the walkthrough and the credentials file, and shows no secret again.
  assert.match(second.stdout, /^fieldgate demo mode: open http:\/\/localhost:\d+\/ and press "Try the demo"\. .*demo-credentials\.json\.\n$/);
  for (const secret of [credentials.password, credentials.authorizationCodeClient.client_secret]) {
    assert.ok(!second.stdout.includes(secret));
  }
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2);
});

test("serve with a public base URL leaves an empty database empty unless FIELDGATE_DEMO=true asks for the demo", async () => {
  const h = cliHarness();
  const served = await serveOnce(h, {}, ["--port", "0", "--base-url", "https://auth.example.com"]);
  assert.equal(served.code, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 0, "no demo account on a public server");
  assert.equal(existsSync(join(h.dir, "demo-credentials.json")), false);
  assert.match(served.stdout, /^Empty database, no demo data: https:\/\/auth\.example\.com is not this machine\. .*FIELDGATE_DEMO=true/);
  assert.ok(h.log.some((l) => l.event === "demo_not_seeded"));
  // Asked for explicitly, it is seeded all the same; [::1] and 127.0.0.1 count as this machine.
  const asked = await serveOnce(h, { FIELDGATE_DEMO: "true" }, ["--port", "0", "--base-url", "https://auth.example.com"]);
  assert.equal(asked.code, 0);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2);
  for (const base of ["http://[::1]:8080", "http://127.0.0.1:8080"]) {
    const local = cliHarness();
    await serveOnce(local, {}, ["--port", "0", "--base-url", base]);
    assert.equal(local.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2, base);
  }
});

test("serve listening beyond loopback (HOST=0.0.0.0, as in a container) seeds no demo even with a localhost base URL", async () => {
  for (const host of ["0.0.0.0", "::", "192.168.1.20"]) {
    const h = cliHarness();
    const served = await serveOnce(h, {}, ["--port", "0", "--host", host]);
    assert.equal(served.code, 0);
    assert.equal(h.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 0, host);
    assert.equal(existsSync(join(h.dir, "demo-credentials.json")), false);
    assert.match(served.stdout, new RegExp(`^Empty database, no demo data: the server listens on ${host.replace(/\./g, "\\.")}, beyond`));
    assert.doesNotMatch(served.stdout, /password|client_secret/i);
    assert.ok(h.log.some((l) => l.event === "demo_not_seeded" && l.fields.reason === "host_not_loopback"), host);
  }
  for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1"]) {
    const local = cliHarness();
    await serveOnce(local, {}, ["--port", "0", "--host", host]);
    assert.equal(local.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2, host);
  }
  const asked = cliHarness();
  await serveOnce(asked, { FIELDGATE_DEMO: "true" }, ["--port", "0", "--host", "0.0.0.0"]);
  assert.equal(asked.query("SELECT COUNT(*) AS n FROM users")[0]!.n, 2, "FIELDGATE_DEMO=true seeds anywhere");
});

test("serve ends with exit 1 and a server_failed line when its listener stops serving on its own", async () => {
  const h = cliHarness();
  let closed = false;
  const deps = h.deps({
    listen: async (options, build) => {
      await build(FAKE_BOUND_PORT);
      return {
        url: `http://127.0.0.1:${FAKE_BOUND_PORT}`,
        close: async () => void (closed = true),
        failed: Promise.resolve(new Error("Too many open files (os error 24)")),
      };
    },
    shutdownSignal: () => new Promise(() => {}),
  });
  const io = { stdout: () => {}, stderr: () => {}, readStdin: async () => "", isTTY: false };
  assert.equal(await runCli(["serve", "--db", h.dbPath, "--port", "0"], io, deps), 1);
  assert.equal(closed, true);
  const failed = h.log.find((l) => l.event === "server_failed");
  assert.match(String(failed?.fields.error), /Too many open files/);
  assert.ok(!h.log.some((l) => l.event === "stopped"));
});

test("serve logs the migrations it applied, listening, shutting_down and stopped, and closes the database", async () => {
  const h = cliHarness();
  const served = await serveOnce(h);
  assert.deepEqual(h.log.map((l) => l.event).filter((e) => e !== "request"), ["migrated", "demo_seeded", "listening", "shutting_down", "stopped"]);
  const applied = h.log.find((l) => l.event === "migrated")!.fields.applied as string[];
  assert.equal(applied.length, MIGRATIONS.length);
  assert.equal(applied[0], MIGRATIONS[0]!.name);
  // A second start finds nothing to apply, and says nothing of it.
  h.log.length = 0;
  await serveOnce(h);
  assert.ok(!h.log.some((l) => l.event === "migrated"));
  assert.equal(h.log.find((l) => l.event === "listening")!.fields.url, `http://127.0.0.1:${FAKE_BOUND_PORT}`);
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  assert.equal(h.log.find((l) => l.event === "listening")!.fields.version, version, "the release serving");
  assert.equal((await served.app.fetch(new Request("http://localhost:8080/healthz"))).status, 503);
});

test("serve hands the app the adapter's synchronous digest and HMAC, off the pool PBKDF2 runs on", async () => {
  const served = await serveOnce(cliHarness());
  assert.equal(served.app.deps.digest, syncSha256Hex);
  assert.equal(served.app.deps.hmac, syncHmacSha256Base64Url);
});

test("serve checks bcrypt digests on the adapter's threads, made once and ended at shutdown", async () => {
  let made = 0;
  let closed = 0;
  const verify = async () => false;
  const bcrypt = () => (made++, { verify, close: async () => void closed++ });
  const whileServing = async () => assert.equal(closed, 0, "running while the server is");
  const served = await serveOnce(cliHarness(), {}, undefined, whileServing, { bcrypt });
  assert.equal(served.app.deps.bcrypt, verify);
  assert.deepEqual({ made, closed }, { made: 1, closed: 1 });
});

test("serve on Node builds the app with the adapter's light responses, which only its listener reads", async () => {
  const served = await serveOnce(cliHarness());
  assert.equal(served.app.deps.respond.text, lightTextResponse);
  assert.notEqual(deferredText(await served.app.fetch(new Request("http://localhost:8080/healthz"))), undefined);
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

test("FIELDGATE_DEMO=false on an empty database seeds nothing: no demo account, clients, file or printed secret", async () => {
  const h = cliHarness();
  const served = await serveOnce(h, { FIELDGATE_DEMO: "false" });
  assert.equal(served.code, 0);
  assert.equal(served.stdout, "");
  assert.equal(existsSync(join(h.dir, "demo-credentials.json")), false);
  for (const table of ["users", "clients", "organizations", "fields"]) {
    assert.equal(h.query(`SELECT COUNT(*) AS n FROM ${table}`)[0]!.n, 0, table);
  }
  assert.ok(!h.log.some((l) => l.event === "demo_seeded"));
  // Unset again later, the next start is the documented first start: it seeds.
  assert.match((await serveOnce(h)).stdout, /demo/i);
});

test("serve does not seed a database that already has organizations", async () => {
  const h = cliHarness();
  await h.run(["users", "add", "--username", "robot", "--integration", "--org", "acme"]);
  const served = await serveOnce(h);
  assert.equal(served.stdout, "");
  assert.equal(existsSync(join(h.dir, "demo-credentials.json")), false);
  assert.equal(served.app.deps.config.demo, false);
});

/** /demo/start, then the /oauth/authorize it redirects to: 200 (sign-in page) when the redirect URI matches. */
async function demoStartStatus(app: App): Promise<number> {
  const base = app.deps.config.baseUrl;
  const start = await app.fetch(new Request(`${base}/demo/start`));
  assert.equal(start.status, 302);
  const authorize = new URL(start.headers.get("location")!, base);
  assert.equal(authorize.searchParams.get("redirect_uri"), `${base}/demo/callback`);
  return (await app.fetch(new Request(authorize))).status;
}

const demoRedirectUri = (h: CliHarness) =>
  h.query("SELECT redirect_uri FROM clients WHERE grant_type = 'authorization_code' ORDER BY id")[0]!.redirect_uri;

test("serve on port 0 without a base URL advertises the port it bound, not 0", async () => {
  const h = cliHarness();
  const served = await serveOnce(h, {}, ["--port", "0"]);
  const base = `http://localhost:${FAKE_BOUND_PORT}`;
  assert.equal(served.app.deps.config.baseUrl, base);
  assert.equal(served.app.deps.config.port, FAKE_BOUND_PORT);
  const metadata = await (await served.app.fetch(new Request(`${base}/.well-known/oauth-authorization-server`))).json();
  assert.equal(metadata.issuer, base);
  assert.equal(metadata.token_endpoint, `${base}/oauth/token`);
  assert.match(served.stdout, new RegExp(`Sign in at ${base}/`));
  assert.match(served.stdout, new RegExp(`redirect_uri: +${base}/demo/callback`));
  assert.doesNotMatch(served.stdout, /localhost:0\b/);
  assert.equal(demoRedirectUri(h), `${base}/demo/callback`);
  assert.equal(h.log.find((l) => l.event === "listening")!.fields.base_url, base);
});

test("serve warns when the base URL is plain http beyond loopback, and not for https or loopback", async () => {
  for (const [base, warned] of [
    ["http://auth.example.com", true],
    ["http://192.0.2.10:8080", true],
    ["https://auth.example.com", false],
    ["http://127.0.0.1:8080", false],
    ["http://localhost:8080", false],
  ] as const) {
    const h = cliHarness();
    await serveOnce(h, {}, ["--port", "0", "--base-url", base]);
    const warning = h.log.find((l) => l.event === "insecure_base_url");
    assert.equal(warning !== undefined, warned, base);
    if (warning) assert.equal(warning.fields.base_url, base);
  }
});

test("an explicit base URL wins over the bound port", async () => {
  const h = cliHarness();
  const served = await serveOnce(h, { FIELDGATE_BASE_URL: "https://auth.example.com" }, ["--port", "0"]);
  assert.equal(served.app.deps.config.baseUrl, "https://auth.example.com");
});

const restarts = [
  { name: "port", first: ["--port", "41001"], second: ["--port", "41002"], base: "http://localhost:41002" },
  { name: "base URL", first: ["--port", "0"], second: ["--port", "0", "--base-url", "http://127.0.0.1:9090"], base: "http://127.0.0.1:9090" },
];

for (const row of restarts) {
  test(`after a restart on another ${row.name}, the demo client's redirect URI follows and the demo starts`, async () => {
    const h = cliHarness();
    await serveOnce(h, {}, row.first);
    const other = await h.json(["clients", "add", "--name", "third party", "--grant", "authorization_code",
      "--redirect-uri", "http://localhost:41001/demo/callback", "--scope", "fields:read"]);
    let status = 0;
    const served = await serveOnce(h, {}, row.second, async (app) => void (status = await demoStartStatus(app)));
    assert.equal(served.app.deps.config.baseUrl, row.base);
    assert.equal(status, 200, "/oauth/authorize refused the demo's redirect_uri");
    assert.equal(demoRedirectUri(h), `${row.base}/demo/callback`);
    const updated = h.log.filter((l) => l.event === "demo_redirect_uri_updated");
    assert.equal(updated.length, 1);
    assert.equal(updated[0]!.fields.redirect_uri, `${row.base}/demo/callback`);
    // Another client registered for the old URI keeps it.
    const kept = h.query("SELECT redirect_uri FROM clients WHERE client_id = ?", String(other.client_id));
    assert.equal(kept[0]!.redirect_uri, "http://localhost:41001/demo/callback");
  });
}

test("with demo mode off the demo client's registration is left alone", async () => {
  const h = cliHarness();
  await serveOnce(h, {}, ["--port", "41001"]);
  await serveOnce(h, { FIELDGATE_DEMO: "false" }, ["--port", "41002"]);
  assert.equal(demoRedirectUri(h), "http://localhost:41001/demo/callback");
});

/** A token request that names no client: a failure counted against the caller's address. */
const namelessTokenRequest = () =>
  new Request("http://localhost:8080/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials",
  });

test("serve counts failures in the database, alone or as one of several workers", async () => {
  const h = cliHarness();
  const fail = async (app: App) => assert.equal((await app.fetch(namelessTokenRequest(), { remoteAddress: "203.0.113.7" })).status, 401);
  const counted = () => h.query("SELECT key, failures FROM throttle_counters").map((r) => ({ ...r }));
  await serveOnce(h, {}, ["--port", "0", "--base-url", "http://localhost:8080"], fail);
  assert.deepEqual(counted(), [{ key: "failures:ip:203.0.113.7", failures: 1 }]);
  const worker = { index: 1, run: () => Promise.resolve(1) };
  await serveOnce(h, {}, ["--workers", "2", "--port", "0", "--base-url", "http://localhost:8080"], fail, { workers: worker });
  assert.deepEqual(counted(), [{ key: "failures:ip:203.0.113.7", failures: 2 }]);
});

/**
 * A worker pool that reports its first worker listening on `port`, then, like a real primary that runs until its
 * workers stop, keeps running until `settled` (the announcement the test waits for) and ends with 0. The 20 s
 * fallback only keeps a broken run from hanging the suite; a working one never waits for it.
 */
function fakePool(port: number, settled: Promise<unknown>) {
  return {
    index: undefined,
    async run(_count: number, options?: { onListening?(port: number): void }) {
      options?.onListening?.(port);
      let fallback: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => (fallback = setTimeout(resolve, 20_000)))]);
      clearTimeout(fallback);
      return 0;
    },
  };
}

/** `serve --workers 2` over a fake pool on `port`, running until stdout shows `until`; its exit code and stdout. */
async function serveWorkersUntil(h: CliHarness, port: number, until: string): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  let printed!: () => void;
  const shown = new Promise<void>((resolve) => (printed = resolve));
  const io = {
    stdout: (t: string) => {
      stdout += t;
      if (stdout.includes(until)) printed();
    },
    stderr: () => {},
    readStdin: async () => "",
    isTTY: false,
  };
  const code = await runCli(["serve", "--workers", "2", "--port", "0", "--db", h.dbPath], io, h.deps({ workers: fakePool(port, shown) }));
  return { code, stdout };
}

test("serve --workers: the primary announces the demo for the port its first worker listens on", async () => {
  const h = cliHarness();
  const { code, stdout } = await serveWorkersUntil(h, 4321, "Sign in at");
  assert.equal(code, 0);
  assert.match(stdout, /Sign in at http:\/\/localhost:4321\/ as:/);
  const credentials = JSON.parse(readFileSync(join(h.dir, "demo-credentials.json"), "utf8"));
  assert.equal(credentials.authorizationCodeClient.redirect_uri, "http://localhost:4321/demo/callback");
  assert.doesNotMatch(stdout, /demo mode: open/, "the first start shows the banner, not the later-start reminder");
});

test("serve --workers on demo data: the primary alone prints the reminder, for the port the workers share", async () => {
  const h = cliHarness();
  await serveOnce(h);
  const { code, stdout } = await serveWorkersUntil(h, 4322, "demo mode");
  assert.equal(code, 0);
  assert.match(stdout, /^fieldgate demo mode: open http:\/\/localhost:4322\/ and press "Try the demo"\./);
  assert.equal(stdout.match(/demo mode/g)?.length, 1);
  assert.doesNotMatch(stdout, /Sign in at/);
});

test("serve --workers: a failure to announce the demo is logged and does not take the primary down", async () => {
  const h = cliHarness();
  let writes = 0;
  let failed!: () => void;
  const logged = new Promise<void>((resolve) => (failed = resolve));
  const deps = h.deps({
    // The seed's write succeeds; the rewrite for the bound port fails (a full disk, say).
    writePrivateFile: async () => {
      if (++writes > 1) throw new Error("disk full");
    },
    log: (event, fields = {}) => {
      h.log.push({ event, fields });
      if (event === "demo_announce_failed") failed();
    },
  });
  deps.workers = fakePool(4321, logged);
  const io = { stdout: () => {}, stderr: () => {}, readStdin: async () => "", isTTY: false };
  assert.equal(await runCli(["serve", "--workers", "2", "--port", "0", "--db", h.dbPath], io, deps), 0);
  assert.deepEqual(h.log.filter((l) => l.event === "demo_announce_failed").map((l) => l.fields.error), ["disk full"]);
});

test("a signal that arrives while serve is still seeding stops it gracefully once it is up, with its log lines", async () => {
  const h = cliHarness();
  const order: string[] = [];
  const deps = h.deps({
    shutdownSignal: () => {
      order.push("listening for signals");
      // The signal has already come: the operator pressed Ctrl-C during the seed.
      return Promise.resolve("SIGTERM");
    },
    listen: async (options, build) => {
      order.push("seeding and building");
      await build(FAKE_BOUND_PORT);
      return { url: `http://127.0.0.1:${FAKE_BOUND_PORT}`, close: async () => {} };
    },
  });
  const io = { stdout: () => {}, stderr: () => {}, readStdin: async () => "", isTTY: false };
  const code = await runCli(["serve", "--db", h.dbPath, "--port", "0"], io, deps);
  assert.equal(code, 0);
  assert.deepEqual(order, ["listening for signals", "seeding and building"]);
  const events = h.log.map((l) => l.event).filter((e) => e !== "request");
  assert.deepEqual(events.slice(-3), ["listening", "shutting_down", "stopped"]);
  assert.equal(h.log.find((l) => l.event === "shutting_down")!.fields.signal, "SIGTERM");
});
