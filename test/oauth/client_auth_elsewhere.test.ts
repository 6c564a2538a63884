// Client authentication after another process changed the client: a second store on the same file stands for the
// admin CLI or another `serve --workers` process. The very next request is answered as the client now stands: nothing
// of an earlier request's row outlives it, and the issuing write re-checks the whole row.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { NewClient, Store } from "../../src/store/contract.ts";
import { StoreBusyError } from "../../src/store/errors.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { openTestApp, type SeededClient, type TestApp } from "../helpers/test_app.ts";
import { ccRequest, codeBody, issueCode, tokenInfo } from "../helpers/codes.ts";
import { postJson } from "../helpers/requests.ts";

interface World {
  t: TestApp;
  other: Store;
  client: SeededClient;
}

async function withWorld(run: (w: World) => Promise<void>, options: { scope?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-elsewhere-"));
  const path = join(dir, "test.db");
  const t = await openTestApp({ FIELDGATE_DB: path });
  const other = openStore(path);
  try {
    const client = await t.seed.client({ grant: "client_credentials", scope: options.scope });
    await run({ t, other, client });
  } finally {
    await other.close();
    await t.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One address for every request, so the throttle counts failures (without one it locks nobody out). */
const FROM = { remoteAddress: "203.0.113.7" };

const issue = async (t: TestApp, client: { clientId: string; clientSecret: string }, extra: Record<string, string> = {}) => {
  const res = await t.app.fetch(ccRequest(client, extra), FROM);
  const body = await res.json() as Record<string, unknown>;
  return { status: res.status, error: body.error, scope: body.scope, token: body.access_token as string | undefined };
};

/**
 * Another process deletes the client and registers a new one with `changes` over its old attributes. The client was
 * the newest, so the new row gets its row id (asserted), and by default its client_id and secret digest too.
 */
async function reregister(w: World, changes: Partial<NewClient>) {
  await issue(w.t, w.client);
  const before = w.client.client;
  await w.other.clients.remove(before.clientId, w.t.clock.nowSeconds());
  const again = await w.other.clients.insert({ ...before, ...changes, now: w.t.clock.nowSeconds() });
  assert.equal(again.id, before.id);
}

const failures = async (t: TestApp) =>
  (await t.store.audit.list({})).filter((e) => e.event === "client_auth_failed").map((e) => (e.detail as { reason: string }).reason);

/** Another process gives the client a new secret (old tokens stay); returns the new credentials. */
async function rotateElsewhere(w: World) {
  const fresh = { clientId: w.client.clientId, clientSecret: "n".repeat(43) };
  await w.other.clients.rotateSecret(fresh.clientId, { secretHash: await sha256Hex(fresh.clientSecret), now: w.t.clock.nowSeconds(), revokeTokens: false });
  return fresh;
}

/** Issues one token, then sends wrong secrets from FROM until one more failure would start the lockout. */
async function oneFailureShort(w: World) {
  await issue(w.t, w.client);
  const wrong = { clientId: w.client.clientId, clientSecret: "w".repeat(43) };
  for (let i = 0; i < w.t.config.throttleMaxFailures - 1; i++) assert.equal((await issue(w.t, wrong)).status, 401);
  return wrong;
}

/** The client's next request is refused as a fresh read of a missing client refuses it, and no token is left. */
async function refusedAsUnknown(w: World) {
  const refused = await issue(w.t, w.client);
  assert.deepEqual([refused.status, refused.error], [401, "invalid_client"]);
  assert.deepEqual(await failures(w.t), ["unknown_client"]);
  assert.equal(await w.t.store.tokens.count(), 0);
}

test("a secret rotated by another process: the old secret is invalid_client once audited, the new one works", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    const fresh = await rotateElsewhere(w);
    const old = await issue(w.t, w.client);
    assert.deepEqual([old.status, old.error], [401, "invalid_client"]);
    assert.deepEqual(await failures(w.t), ["bad_secret"]);
    assert.equal(await w.t.store.tokens.count(), 1);
    assert.equal((await issue(w.t, fresh)).status, 200);
    assert.equal((await issue(w.t, w.client)).status, 401);
    assert.deepEqual(await failures(w.t), ["bad_secret", "bad_secret"]);
  });
});

test("after a rotation elsewhere the new secret works at once", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    const fresh = await rotateElsewhere(w);
    assert.equal((await issue(w.t, fresh)).status, 200);
    assert.deepEqual(await failures(w.t), []);
  });
});

test("no secret at all, after a token, is invalid_client (missing_secret)", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    const res = await w.t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials", client_id: w.client.clientId }), FROM);
    assert.equal(res.status, 401);
    assert.deepEqual(await failures(w.t), ["missing_secret"]);
  });
});

test("a client disabled by another process is refused at once, and works again once re-enabled", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    await w.other.clients.setDisabled(w.client.clientId, true);
    const refused = await issue(w.t, w.client);
    assert.deepEqual([refused.status, refused.error], [401, "invalid_client"]);
    assert.deepEqual(await failures(w.t), ["client_disabled"]);
    await w.other.clients.setDisabled(w.client.clientId, false);
    assert.equal((await issue(w.t, w.client)).status, 200);
    assert.equal(await w.t.store.tokens.count(), 2);
  });
});

test("an integration user disabled elsewhere is invalid_grant; re-enabled elsewhere, tokens come again (no stale refusal)", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    const userId = w.client.client.integrationUserId!;
    await w.other.users.setDisabled(userId, true);
    const refused = await issue(w.t, w.client);
    assert.deepEqual([refused.status, refused.error], [400, "invalid_grant"]);
    await w.other.users.setDisabled(userId, false);
    assert.equal((await issue(w.t, w.client)).status, 200);
  });
});

test("a client deleted elsewhere is invalid_client, not a token for a client that no longer exists", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    await w.other.clients.remove(w.client.clientId, w.t.clock.nowSeconds());
    await refusedAsUnknown(w);
  });
});

test("re-registered elsewhere under the same client_id and secret with a narrower scope: the earlier scope is not granted", async () => {
  await withWorld(async (w) => {
    await reregister(w, { scope: "fields:read" });
    const asked = await issue(w.t, w.client, { scope: "fields:read fields:write" });
    assert.deepEqual([asked.status, asked.error], [400, "invalid_scope"]);
    const plain = await issue(w.t, w.client);
    assert.deepEqual([plain.status, plain.scope], [200, "fields:read"]);
  }, { scope: "fields:read fields:write" });
});

test("a deleted client's id and secret do not live on through a new client that reuses its row id", async () => {
  await withWorld(async (w) => {
    await reregister(w, { clientId: "B".repeat(22) });
    await refusedAsUnknown(w);
  });
});

test("re-registered elsewhere under the same client_id, id and secret as an authorization-code client: no client_credentials token", async () => {
  await withWorld(async (w) => {
    // The schema lets the store API give a code client an integration user; the CLI never does.
    await reregister(w, { grantType: "authorization_code", redirectUris: ["https://client.example/cb"] });
    const refused = await issue(w.t, w.client);
    assert.deepEqual([refused.status, refused.error], [400, "unauthorized_client"]);
    assert.equal(await w.t.store.tokens.count(), 0);
  });
});

test("re-registered elsewhere with the same secret for another integration user: tokens act as the new user", async () => {
  await withWorld(async (w) => {
    const robot = await w.t.seed.integrationUser({ org: "globex" });
    await reregister(w, { integrationUserId: robot.id });
    const issued = await issue(w.t, w.client);
    assert.equal(issued.status, 200);
    const info = await (await tokenInfo(w.t, issued.token!)).json();
    assert.equal(info.resource_owner_id, robot.id);
  });
});

test("an old secret after a rotation elsewhere counts as a failure, and one failure short it starts the lockout", async () => {
  await withWorld(async (w) => {
    const wrong = await oneFailureShort(w);
    await rotateElsewhere(w);
    // The leaked old secret worked a moment ago; now it is one more failure, the limit.
    assert.equal((await issue(w.t, w.client)).status, 401);
    assert.equal((await issue(w.t, wrong)).status, 429);
    assert.equal((await w.t.store.audit.list({})).filter((e) => e.event === "throttled").length, 1);
  });
});

test("a success clears the client's failures from that address", async () => {
  await withWorld(async (w) => {
    const wrong = await oneFailureShort(w);
    assert.equal((await issue(w.t, w.client)).status, 200);
    for (let i = 0; i < w.t.config.throttleMaxFailures - 1; i++) assert.equal((await issue(w.t, wrong)).status, 401);
  });
});

test("an error that is not a refusal (a busy database) is not answered twice", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    let writes = 0;
    w.t.store.tokens.issue = () => {
      writes++;
      return Promise.reject(new StoreBusyError("database is locked"));
    };
    const res = await w.t.app.fetch(ccRequest(w.client), FROM);
    assert.equal(res.status, 503);
    assert.equal(writes, 1);
  });
});

test("a lockout answers 429 to the right secret of a client that had a token a moment before", async () => {
  await withWorld(async (w) => {
    await issue(w.t, w.client);
    const wrong = { clientId: w.client.clientId, clientSecret: "w".repeat(43) };
    for (let i = 0; i < w.t.config.throttleMaxFailures; i++) assert.equal((await issue(w.t, wrong)).status, 401);
    assert.equal((await issue(w.t, w.client)).status, 429);
  });
});

test("introspection and revocation refuse a secret rotated elsewhere", async () => {
  await withWorld(async (w) => {
    const { token } = await issue(w.t, w.client);
    await rotateElsewhere(w);
    const body = { token: token!, client_id: w.client.clientId, client_secret: w.client.clientSecret };
    assert.equal((await w.t.app.fetch(postJson("/oauth/introspect", body), FROM)).status, 401);
    assert.equal((await w.t.app.fetch(postJson("/oauth/revoke", body), FROM)).status, 401);
  });
});

test("a refusal is answered once: one replayed code, one reuse audit row", async () => {
  const t = await openTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  assert.equal((await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)))).status, 200);
  assert.equal((await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)))).status, 400);
  assert.equal((await t.store.audit.list({})).filter((e) => e.event === "code_reuse_detected").length, 1);
});
