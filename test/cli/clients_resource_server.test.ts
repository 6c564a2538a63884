// clients add --resource-server and what the other clients commands do with a resource server, through runCli.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { cliHarness, type CliHarness } from "./harness.ts";

async function addResourceServer(h: CliHarness) {
  return h.json(["clients", "add", "--name", "Orders API", "--resource-server"]);
}

test("clients add --resource-server prints the id and secret once, with no grant, scope or redirect URI", async () => {
  const h = cliHarness();
  const out = await addResourceServer(h);
  assert.match(String(out.client_secret), /^fgcs_[A-Za-z0-9_-]{43}$/);
  assert.equal(out.grant_type, null);
  assert.equal(out.resource_server, true);
  assert.equal(out.redirect_uri, null);
  assert.deepEqual(out.redirect_uris, []);
  assert.equal(out.scope, "");
  const [row] = h.query("SELECT secret_hash, resource_server FROM clients WHERE client_id = ?", String(out.client_id));
  assert.equal(row!.secret_hash, await sha256Hex(String(out.client_secret)));
  assert.equal(row!.resource_server, 1);
  assert.ok(!h.snapshot().includes(String(out.client_secret)));
});

test("clients add --resource-server without --json names it a resource server and shows the secret once", async () => {
  const h = cliHarness();
  const result = await h.run(["clients", "add", "--name", "Orders API", "--resource-server"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^Registered resource server "Orders API"\.\n/);
  assert.match(result.stdout, /client_secret: fgcs_/);
});

test("clients list and show tell a resource server from a client", async () => {
  const h = cliHarness();
  const rs = await addResourceServer(h);
  const web = await h.json(["clients", "add", "--name", "Web", "--grant", "authorization_code", "--redirect-uri",
    "https://app.example/cb", "--scope", "fields:read"]);
  const listed = (await h.json(["clients", "list"])).clients as Record<string, unknown>[];
  assert.deepEqual(listed.map((c) => [c.client_id, c.grant_type, c.resource_server]), [
    [rs.client_id, null, true],
    [web.client_id, "authorization_code", false],
  ]);
  const text = (await h.run(["clients", "list"])).stdout;
  assert.match(text, new RegExp(`^${rs.client_id}  resource_server  Orders API`, "m"));
  assert.match(text, new RegExp(`^${web.client_id}  authorization_code  Web`, "m"));
  assert.match((await h.run(["clients", "show", String(rs.client_id)])).stdout, /resource_server\s+true/);
});

test("clients add --resource-server is audited once, on registration", async () => {
  const h = cliHarness();
  const rs = await addResourceServer(h);
  const rows = h.query("SELECT event, client_id, detail FROM audit_events").map((r) => ({ ...r }));
  assert.deepEqual(rows, [{
    event: "client_created",
    client_id: rs.client_id,
    detail: '{"resource_server":true}',
  }]);
});

test("a resource server's secret rotates, and it is disabled and deleted, like every client's", async () => {
  const h = cliHarness();
  const rs = await addResourceServer(h);
  const id = String(rs.client_id);
  const rotated = await h.json(["clients", "rotate-secret", id]);
  assert.notEqual(rotated.client_secret, rs.client_secret);
  assert.equal(h.query("SELECT secret_hash FROM clients WHERE client_id = ?", id)[0]!.secret_hash,
    await sha256Hex(String(rotated.client_secret)));
  assert.equal((await h.json(["clients", "disable", id])).disabled, true);
  assert.equal((await h.json(["clients", "delete", id])).deleted, true);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM clients")[0]!.n, 0);
});

test("clients set-redirect-uri refuses a resource server with exit 1 and changes nothing", async () => {
  const h = cliHarness();
  const rs = await addResourceServer(h);
  const before = h.snapshot();
  const result = await h.run(["clients", "set-redirect-uri", String(rs.client_id), "https://app.example/cb"]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /resource_server client: it has no redirect URI/);
  assert.equal(h.snapshot(), before);
});

test("clients require-dpop refuses a resource server, which obtains no token, and changes nothing", async () => {
  const h = cliHarness();
  const rs = await addResourceServer(h);
  const before = h.snapshot();
  const result = await h.run(["clients", "require-dpop", String(rs.client_id)]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /is a resource server: it obtains no token/);
  assert.equal(h.snapshot(), before);
});
