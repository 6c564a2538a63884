// The token store on PostgreSQL under real concurrency (two instances, each its own pool, on one database), and the
// round trips its hot paths cost.
import assert from "node:assert/strict";
import { postgresTest } from "../../helpers/postgres.ts";
import { openCountedStore, raceTest } from "../../helpers/postgres_stores.ts";
import { randomHash, robotClient, storeCode, uncounted, webClient } from "../../helpers/store_rows.ts";
import type { NewToken, Store } from "../../../src/store/contract.ts";

const NOW = 1_000;

const pair = (): NewToken[] => [
  { tokenHash: randomHash(), kind: "access", grantType: "authorization_code", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 100 },
  { tokenHash: randomHash(), kind: "refresh", grantType: "authorization_code", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 1000 },
];
const ccToken = (): NewToken =>
  ({ tokenHash: randomHash(), kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 1800 });

/** Alternates between the instances, so concurrent calls really run on different connections and pools. */
const on = (stores: Store[], i: number) => stores[i % stores.length]!;

raceTest("of 50 concurrent exchanges of one code exactly one is issued tokens, and the replays revoke them", async (w) => {
  const { a, web: client } = w;
  const { codeHash, familyId } = await storeCode(a, { client, userId: w.userId, now: NOW });
  const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const tokens = pair();
    return { tokens, result: await on(w.stores, i).tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens } })) };
  }));
  const issued = results.filter((r) => r.result.status === "issued");
  assert.equal(issued.length, 1);
  assert.ok(results.every((r) => r.result.status === "issued" || r.result.status === "reused"));
  assert.equal(await a.tokens.count(), 2);
  // Every replay waited for the winner's commit, so the revocation found the winner's tokens.
  for (const token of issued[0]!.tokens) assert.equal((await a.tokens.findByHash(token.tokenHash))?.revokedAt, NOW);
  const [family] = await w.sql.query("SELECT revoked_reason FROM grant_families WHERE id = $1", [familyId]);
  assert.equal(family?.revoked_reason, "code_reused");
});

raceTest("an exchange racing the user's revocation of the client never leaves its tokens live", async (w) => {
  const { a, b, web: client, userId } = w;
  for (let i = 0; i < 40; i++) {
    const { codeHash } = await storeCode(a, { client, userId, now: NOW });
    const tokens = pair();
    const [result] = await Promise.all([
      a.tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens } })),
      b.tokens.revokeUserClient(userId, client.id, NOW),
    ]);
    // Issued before the revocation committed (and then revoked by it), or refused: never live.
    assert.ok(result.status === "issued" || result.status === "family_revoked", result.status);
    for (const token of result.status === "issued" ? tokens : []) {
      assert.equal((await a.tokens.findByHash(token.tokenHash))?.revokedAt, NOW, `round ${i}`);
    }
  }
});

raceTest("an issuance racing rotateSecret with revokeTokens never leaves a live token once the rotation returned", async (w) => {
  const { a, b, web, userId } = w;
  const robot = await robotClient(a, w.rows);
  for (let i = 0; i < 30; i++) {
    const [cc, ac] = [await a.clients.findByClientId(robot.clientId), await a.clients.findByClientId(web.clientId)];
    const { codeHash } = await storeCode(a, { client: ac!, userId, now: NOW });
    const issued: NewToken[][] = [];
    const issue = async (store: Store) => {
      const token = ccToken();
      const outcome = await store.tokens.issue({ clientId: robot.id, userId: robot.integrationUserId!, familyId: null, tokens: [token], authenticated: cc! });
      if (outcome === "issued") issued.push([token]);
      else assert.equal(outcome, "client_changed");
    };
    const exchange = async (store: Store) => {
      const tokens = pair();
      const result = await store.tokens.exchangeCode(codeHash, ac!, NOW, (_c, facts) => facts.clientChanged ? { refuse: "changed" } : { issue: { tokens } });
      if (result.status === "issued") issued.push(tokens);
    };
    await Promise.all([
      issue(a), issue(b), exchange(a), issue(a), issue(b),
      b.clients.rotateSecret(robot.clientId, { secretHash: `robot-${i}`, now: NOW, revokeTokens: true }),
      a.clients.rotateSecret(web.clientId, { secretHash: `web-${i}`, now: NOW, revokeTokens: true }),
    ]);
    for (const token of issued.flat()) {
      assert.equal((await b.tokens.findByHash(token.tokenHash))?.revokedAt, NOW, `round ${i}: a token issued under the old secret is live`);
    }
  }
  const [{ n } = {}] = await w.sql.query("SELECT COUNT(*) AS n FROM tokens WHERE revoked_at IS NULL");
  assert.equal(n, 0);
});

raceTest("an issuance racing clients.setDisabled either committed first or wrote nothing, and is not live", async (w) => {
  const { a, b } = w;
  const robot = await robotClient(a, w.rows);
  for (let i = 0; i < 30; i++) {
    await b.clients.setDisabled(robot.clientId, false);
    const tokens = [ccToken(), ccToken(), ccToken(), ccToken()];
    const [outcomes] = await Promise.all([
      Promise.all(tokens.map((token, k) =>
        on([a, b], k).tokens.issue({ clientId: robot.id, userId: robot.integrationUserId!, familyId: null, tokens: [token], authenticated: robot })
      )),
      b.clients.setDisabled(robot.clientId, true),
    ]);
    for (const [k, token] of tokens.entries()) {
      const found = await a.tokens.findByHash(token.tokenHash);
      assert.equal(found !== undefined, outcomes[k] === "issued", `round ${i}: outcome ${outcomes[k]}`);
      if (outcomes[k] !== "issued") assert.equal(outcomes[k], "client_changed");
      assert.equal(await a.tokens.findActiveAccess(token.tokenHash, NOW), undefined);
    }
  }
});

postgresTest("round trips: client-credentials issuance 2 with the client lookup, the bearer check 1, the code exchange 4", async (db) => {
  const c = await openCountedStore(db.url);
  try {
    const robot = await robotClient(c.store, c.rows);
    const token = ccToken();
    const audit = { at: NOW, event: "token_issued", clientId: robot.clientId, userId: robot.integrationUserId, ip: "192.0.2.1", detail: {} };
    c.trips();
    const { client } = await c.store.throttles.authenticateClient(uncounted(robot), { now: NOW, windowSeconds: 60 });
    const outcome = await c.store.tokens.issue({ clientId: robot.id, userId: robot.integrationUserId!, familyId: null, tokens: [token], audit, authenticated: client! });
    assert.equal(outcome, "issued");
    assert.equal(c.trips(), 2);
    assert.ok(await c.store.tokens.findActiveAccess(token.tokenHash, NOW));
    assert.equal(c.trips(), 1);

    const web = await webClient(c.store);
    const { codeHash } = await storeCode(c.store, { client: web, userId: await c.rows.user(), now: NOW });
    c.trips();
    const tokens = pair();
    assert.equal((await c.store.tokens.exchangeCode(codeHash, web, NOW, () => ({ issue: { tokens, audit } }))).status, "issued");
    assert.equal(c.trips(), 4);
  } finally {
    await c.close();
  }
});
