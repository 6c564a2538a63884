// The bearer check keeps its answer between writes (read_cache.ts): every change that matters must still be seen by
// the next request, whichever connection made it. A second store on the same file stands for the admin CLI or
// another `serve --workers` process.
import { test } from "../../helpers/bounded.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../../src/store/sqlite/store.ts";
import type { Store } from "../../../src/store/contract.ts";
import { tokenKey } from "../../../src/oauth/token_keys.ts";
import { buildTestApp, type TestApp } from "../../helpers/test_app.ts";
import { mintAccessToken } from "../../helpers/tokens.ts";
import { gql, at } from "../../helpers/graphql.ts";

interface World {
  t: TestApp;
  other: Store;
  token: string;
  key: string;
  clientId: string;
  userId: number;
}

async function withWorld(run: (w: World) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-bearer-cache-"));
  const path = join(dir, "test.db");
  const t = buildTestApp({ FIELDGATE_DB: path });
  const other = openStore(path);
  try {
    await t.seed.fields(3, { org: "acme" });
    await t.seed.fields(2, { org: "globex" });
    const { client } = await t.seed.client({ grant: "client_credentials", org: "acme" });
    const token = await mintAccessToken(t, { client });
    await run({ t, other, token, key: await tokenKey(t.app.deps, token), clientId: client.clientId, userId: client.integrationUserId! });
  } finally {
    await other.close();
    await t.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const totalCount = async (w: World) => {
  const { status, body } = await gql(w.t, w.token, "{ fields { total_count } }");
  return status === 200 ? at(body, "data", "fields", "total_count") : status;
};

test("a token revoked by another connection is refused on the very next request", async () => {
  await withWorld(async (w) => {
    assert.equal(await totalCount(w), 3);
    assert.equal(await totalCount(w), 3); // now answered from the kept lookup
    const client = await w.other.clients.findByClientId(w.clientId);
    assert.equal((await w.other.tokens.revoke(w.key, client!.id, w.t.clock.nowSeconds())).status, "revoked");
    assert.equal(await totalCount(w), 401);
  });
});

test("a client or user disabled by another connection loses access on the very next request", async () => {
  await withWorld(async (w) => {
    assert.equal(await totalCount(w), 3);
    await w.other.clients.setDisabled(w.clientId, true);
    assert.equal(await totalCount(w), 401);
    await w.other.clients.setDisabled(w.clientId, false);
    assert.equal(await totalCount(w), 3);
    await w.other.users.setDisabled(w.userId, true);
    assert.equal(await totalCount(w), 401);
  });
});

test("a membership added by another connection widens the scope on the very next request", async () => {
  await withWorld(async (w) => {
    assert.equal(await totalCount(w), 3);
    const globex = await w.other.organizations.findBySlug("globex");
    await w.other.organizations.addMember(globex!.id, w.userId, { now: w.t.clock.nowSeconds() });
    assert.equal(await totalCount(w), 5);
  });
});

test("a revocation through the app's own connection is seen at once", async () => {
  await withWorld(async (w) => {
    assert.equal(await totalCount(w), 3);
    await w.t.store.users.setDisabled(w.userId, true);
    assert.equal(await totalCount(w), 401);
  });
});

test("a kept token still expires on time: the expiry is checked on every request", async () => {
  await withWorld(async (w) => {
    const found = await w.t.store.tokens.findActiveAccess(w.key, w.t.clock.nowSeconds());
    assert.ok(found);
    assert.ok(await w.t.store.tokens.findActiveAccess(w.key, found.expiresAt - 1));
    assert.equal(await w.t.store.tokens.findActiveAccess(w.key, found.expiresAt), undefined);
    w.t.clock.advance(found.expiresAt - w.t.clock.nowSeconds());
    assert.equal(await totalCount(w), 401);
  });
});

test("the kept answer is shared between requests, so it is frozen", async () => {
  await withWorld(async (w) => {
    const now = w.t.clock.nowSeconds();
    const first = await w.t.store.tokens.findActiveAccess(w.key, now);
    assert.equal(await w.t.store.tokens.findActiveAccess(w.key, now), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first!.organizationIds));
    assert.throws(() => (first!.organizationIds as number[]).push(99), TypeError);
  });
});

test("fields imported by another connection are counted on the very next request", async () => {
  await withWorld(async (w) => {
    assert.equal(await totalCount(w), 3);
    assert.equal(await totalCount(w), 3); // now answered from the kept count
    const acme = await w.other.organizations.findBySlug("acme");
    const [row] = await w.other.fields.page({ organizationIds: [acme!.id] }, { afterId: 0, limit: 1 }, { take: () => true });
    const sample = { ...row!, boundary: row!.boundary! };
    await w.other.fields.insertMany(acme!.id, [sample, sample], { now: w.t.clock.nowSeconds() });
    assert.equal(await totalCount(w), 5);
    await w.other.fields.insertMany(acme!.id, [sample], { now: w.t.clock.nowSeconds(), replace: true });
    assert.equal(await totalCount(w), 1);
  });
});

test("a membership removed through the app's own connection narrows the kept count at once", async () => {
  await withWorld(async (w) => {
    const globex = await w.t.store.organizations.findBySlug("globex");
    await w.t.store.organizations.addMember(globex!.id, w.userId, { now: w.t.clock.nowSeconds() });
    assert.equal(await totalCount(w), 5);
    assert.equal(await totalCount(w), 5);
    await w.t.store.organizations.removeMember(globex!.id, w.userId);
    assert.equal(await totalCount(w), 3);
  });
});
