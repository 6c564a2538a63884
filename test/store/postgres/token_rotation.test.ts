// Refresh rotation on PostgreSQL under real concurrency (two instances, each its own pool, on one database), and the
// round trips of a refresh.
import assert from "node:assert/strict";
import { postgresTest } from "../../helpers/postgres.ts";
import { holdRows, type Instances, lockWaits, openCountedStore, raceTest } from "../../helpers/postgres_stores.ts";
import { randomHash, storeCode, uncounted, webClient } from "../../helpers/store_rows.ts";
import type { Client, NewToken, RotateResult, Store } from "../../../src/store/contract.ts";

const NOW = 1_000;
/** Races are run a few times: one round may happen to run its contenders one after another. */
const ROUNDS = 4;

const pair = (): NewToken[] => [
  { tokenHash: randomHash(), kind: "access", grantType: "refresh_token", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 100 },
  { tokenHash: randomHash(), kind: "refresh", grantType: "refresh_token", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 1000 },
];

/** A refresh token of a fresh grant (code exchanged through `store`), and the family it opened. */
async function granted(store: Store, client: Client, userId: number) {
  const { codeHash, familyId } = await storeCode(store, { client, userId, now: NOW });
  const tokens = pair();
  const result = await store.tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens } }));
  assert.equal(result.status, "issued");
  return { familyId, refresh: tokens[1]!.tokenHash };
}

/** `n` concurrent rotations of one refresh token, alternating between the instances; each with the pair it planned. */
function race(w: Instances, n: number, input: { refresh: string; client: Client; graceSeconds: number }) {
  return Promise.all(Array.from({ length: n }, async (_, i) => {
    const tokens = pair();
    const result: RotateResult = await w.stores[i % w.stores.length]!.tokens.rotateRefresh({
      refreshHash: input.refresh, client: input.client, now: NOW + 1, graceSeconds: input.graceSeconds, next: () => ({ tokens }),
    });
    return { tokens, result };
  }));
}

async function liveTokens(w: Instances, familyId: string): Promise<number> {
  const [row] = await w.sql.query("SELECT COUNT(*) AS n FROM tokens WHERE family_id = $1 AND revoked_at IS NULL", [familyId]);
  return Number(row?.n);
}

raceTest("of 50 concurrent refreshes of one token exactly one is rotated, and the reuse revokes the family", async (w) => {
  const { a, web: client, userId } = w;
  for (let round = 0; round < ROUNDS; round++) {
    const { refresh, familyId } = await granted(a, client, userId);
    const results = await race(w, 50, { refresh, client, graceSeconds: 0 });
    const statuses = results.map((r) => r.result.status);
    assert.equal(statuses.filter((s) => s === "ok").length, 1, `round ${round}`);
    assert.ok(statuses.includes("reused"));
    // After the first reuse revoked the family, a later presentation is merely invalid, as on SQLite.
    assert.ok(statuses.every((s) => s === "ok" || s === "reused" || s === "invalid"), statuses.join());
    assert.equal(await liveTokens(w, familyId), 0);
    const [family] = await w.sql.query("SELECT revoked_reason FROM grant_families WHERE id = $1", [familyId]);
    assert.equal(family?.revoked_reason, "refresh_reused");
  }
});

raceTest("of 50 concurrent refreshes within a grace period one rotates, at most one retries, and the rest revoke", async (w) => {
  const { a, web: client, userId } = w;
  for (let round = 0; round < ROUNDS; round++) {
    const { refresh, familyId } = await granted(a, client, userId);
    const results = await race(w, 50, { refresh, client, graceSeconds: 10 });
    const oks = results.flatMap((r) => r.result.status === "ok" ? [r.result.retried] : []);
    assert.deepEqual(oks.filter((retried) => !retried).length, 1, `round ${round}`);
    assert.ok(oks.filter((retried) => retried).length <= 1, `round ${round}: ${oks.length} rotations`);
    assert.ok(results.some((r) => r.result.status === "reused"));
    assert.equal(await liveTokens(w, familyId), 0);
  }
});

raceTest("a refresh racing a rotated secret or a revocation of its family never leaves a live pair", async (w) => {
  const { a, b, web, userId } = w;
  for (let i = 0; i < 40; i++) {
    const client = (await a.clients.findByClientId(web.clientId))!;
    const first = await granted(a, client, userId);
    const second = await granted(a, client, userId);
    const rotate = (store: Store, refresh: string) => {
      const tokens = pair();
      return store.tokens.rotateRefresh({ refreshHash: refresh, client, now: NOW + 1, graceSeconds: 0, next: () => ({ tokens }) })
        .then((result) => ({ result, tokens }));
    };
    const [rotatedFirst, rotatedSecond] = await Promise.all([
      rotate(a, first.refresh),
      rotate(b, second.refresh),
      b.tokens.revoke(first.refresh, client.id, NOW + 1),
      a.clients.rotateSecret(web.clientId, { secretHash: `web-${i}`, now: NOW + 1, revokeTokens: i % 2 === 0 }),
    ]);
    assert.equal(await liveTokens(w, first.familyId), 0, `round ${i}: ${rotatedFirst.result.status}`);
    if (i % 2 === 0) assert.equal(await liveTokens(w, second.familyId), 0, `round ${i}: ${rotatedSecond.result.status}`);
    else if (rotatedSecond.result.status !== "ok") assert.equal(rotatedSecond.result.status, "client_changed");
  }
});

raceTest("a family revoked while its rotation waits for the token also revokes the pair the rotation then issues", async (w, db) => {
  const { a, b, web: client } = w;
  const { refresh, familyId } = await granted(a, client, w.userId);
  // The token is held, so the rotation's claim waits for it (holding what it locked before); the revocation then
  // starts and waits too. On release the rotation commits first: the revocation must still find its new pair.
  const holder = await holdRows(db.url, "SELECT 1 FROM tokens WHERE token_hash = $1 FOR UPDATE", [refresh]);
  const tokens = pair();
  const rotation = a.tokens.rotateRefresh({ refreshHash: refresh, client, now: NOW + 1, graceSeconds: 0, next: () => ({ tokens }) });
  await lockWaits(w.sql, 1);
  const revocation = b.tokens.revoke(refresh, client.id, NOW + 1);
  await lockWaits(w.sql, 2);
  await holder.release();
  assert.equal((await rotation).status, "ok");
  assert.deepEqual(await revocation, { status: "revoked", kind: "refresh" });
  assert.equal(await liveTokens(w, familyId), 0);
});

postgresTest("round trips: a refresh costs 3 with the client lookup; a lost race then decides under lock", async (db) => {
  const c = await openCountedStore(db.url);
  try {
    const web = await webClient(c.store);
    const { refresh } = await granted(c.store, web, await c.rows.user());
    const audit = { at: NOW, event: "token_refreshed", clientId: web.clientId, userId: null, ip: null, detail: null };
    const rotate = async (graceSeconds: number) => {
      const { client } = await c.store.throttles.authenticateClient(uncounted(web), { now: NOW, windowSeconds: 60 });
      return c.store.tokens.rotateRefresh({ refreshHash: refresh, client: client!, now: NOW + 1, graceSeconds, next: () => ({ tokens: pair(), audit }) });
    };
    c.trips();
    assert.equal((await rotate(0)).status, "ok");
    assert.equal(c.trips(), 3);
    // Presented again: the read sees it rotated, and the transaction (BEGIN, locks, the token, two revocations,
    // COMMIT) revokes the family.
    assert.equal((await rotate(0)).status, "reused");
    assert.equal(c.trips(), 1 + 1 + 6);
  } finally {
    await c.close();
  }
});
