// The token store's contract, on SQLite and PostgreSQL alike: issuance, the code exchange, the bearer check,
// rotation with reuse detection and grace retries, revocation.
import assert from "node:assert/strict";
import type { AuthenticatedClient, NewToken, Store, TokenGrantType } from "../../../src/store/contract.ts";
import { randomHash, robotClient, rowsTest, type StoreRows, storeCode, webClient } from "../../helpers/store_rows.ts";

const NOW = 1_000;

function pair(now: number, options: { scope?: string; grantType?: TokenGrantType } = {}): NewToken[] {
  const { scope = "fields:read", grantType = "authorization_code" } = options;
  return [
    { tokenHash: randomHash(), kind: "access", grantType, scope, issuedAt: now, expiresAt: now + 100 },
    { tokenHash: randomHash(), kind: "refresh", grantType, scope, issuedAt: now, expiresAt: now + 1000 },
  ];
}

async function exchanged(store: Store, rows: StoreRows, clientId = "web") {
  const client = await webClient(store, clientId);
  const userId = await rows.user();
  const { codeHash, familyId } = await storeCode(store, { client, userId, now: NOW });
  const tokens = pair(NOW);
  const result = await store.tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens } }));
  assert.equal(result.status, "issued");
  return { client, userId, familyId, codeHash, now: NOW, access: tokens[0]!.tokenHash, refresh: tokens[1]!.tokenHash };
}

rowsTest("tokens.exchangeCode issues into the code's family and reports details", async (store, rows) => {
  const { access, client, familyId, now } = await exchanged(store, rows);
  const details = await store.tokens.findActiveAccess(access, now);
  assert.equal(details?.clientPublicId, client.clientId);
  assert.equal(details?.familyId, familyId);
  assert.equal(details?.userKind, "person");
  const { organizationIds: _, ...read } = details!;
  assert.deepEqual(read, await store.tokens.findByHash(access), "the bearer check reads what findByHash does");
  assert.equal(await store.tokens.count(), 2);
});

rowsTest("tokens.exchangeCode uses up the code even when decide refuses", async (store, rows) => {
  const client = await webClient(store);
  const { codeHash } = await storeCode(store, { client, userId: await rows.user(), now: NOW });
  const refused = await store.tokens.exchangeCode(codeHash, client, NOW, () => ({ refuse: "why" }));
  assert.deepEqual(refused.status === "refused" && refused.reason, "why");
  assert.equal((await store.tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens: [] } }))).status, "reused");
  assert.equal(await store.tokens.count(), 0);
});

rowsTest("tokens.exchangeCode tells decide when the client changed or the user was disabled", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  const facts = async (authenticated: AuthenticatedClient) => {
    const { codeHash } = await storeCode(store, { client, userId, now: NOW });
    let seen: unknown;
    await store.tokens.exchangeCode(codeHash, authenticated, NOW, (_code, f) => {
      seen = f;
      return { refuse: "seen" };
    });
    return seen;
  };
  assert.deepEqual(await facts(client), { userDisabled: false, clientChanged: false });
  assert.deepEqual(await facts({ ...client, secretHash: "old" }), { userDisabled: false, clientChanged: true });
  await rows.setUserDisabled(userId, true);
  assert.deepEqual(await facts(client), { userDisabled: true, clientChanged: false });
  await store.clients.setDisabled(client.clientId, true);
  assert.deepEqual(await facts(client), { userDisabled: false, clientChanged: true });
});

rowsTest("tokens.findActiveAccess excludes expired, refresh and disabled-user tokens", async (store, rows) => {
  const { access, refresh, now, userId } = await exchanged(store, rows);
  assert.ok(await store.tokens.findActiveAccess(access, now + 99));
  assert.equal(await store.tokens.findActiveAccess(access, now + 100), undefined);
  assert.equal(await store.tokens.findActiveAccess(refresh, now), undefined);
  await rows.setUserDisabled(userId, true);
  assert.equal(await store.tokens.findActiveAccess(access, now), undefined);
});

rowsTest("tokens.findActiveAccess reads the user's organization ids, ascending, frozen", async (store, rows) => {
  const { access, now, userId } = await exchanged(store, rows);
  assert.deepEqual((await store.tokens.findActiveAccess(access, now))?.organizationIds, []);
  const zeta = await rows.member(userId, "zeta");
  const acme = await rows.member(userId, "acme");
  await rows.member(await rows.user(), "other");
  const found = await store.tokens.findActiveAccess(access, now);
  assert.deepEqual(found?.organizationIds, [zeta, acme].sort((a, b) => a - b));
  assert.ok(Object.isFrozen(found) && Object.isFrozen(found!.organizationIds));
});

function rotate(store: Store, refreshHash: string, client: AuthenticatedClient, now: number, graceSeconds = 0, tokens?: NewToken[]) {
  return store.tokens.rotateRefresh({ refreshHash, client, now, graceSeconds, next: () => (tokens ? { tokens } : undefined) });
}

rowsTest("tokens.rotateRefresh: ok once, then reuse revokes the family", async (store, rows) => {
  const { refresh, client, now } = await exchanged(store, rows);
  const next = pair(now);
  assert.equal((await rotate(store, refresh, client, now, 0, next)).status, "ok");
  assert.equal((await rotate(store, refresh, client, now + 1, 0, pair(now))).status, "reused");
  assert.equal(await store.tokens.findActiveAccess(next[0]!.tokenHash, now + 1), undefined);
  assert.equal((await rotate(store, next[1]!.tokenHash, client, now + 1, 0, pair(now))).status, "invalid");
});

rowsTest("tokens.rotateRefresh: invalid for another client, an expired token, or a refusing next", async (store, rows) => {
  const { refresh, client, now } = await exchanged(store, rows);
  assert.equal((await rotate(store, refresh, { ...client, id: client.id + 99 }, now, 0, pair(now))).status, "invalid");
  assert.equal((await rotate(store, refresh, client, now + 1000, 0, pair(now))).status, "invalid");
  assert.equal((await rotate(store, refresh, client, now)).status, "invalid");
  assert.equal((await rotate(store, randomHash(), client, now, 0, pair(now))).status, "invalid");
  // A refusing next rolls back: the token is still good.
  assert.equal((await rotate(store, refresh, client, now, 0, pair(now))).status, "ok");
});

rowsTest("tokens.rotateRefresh: the new pair belongs to the family, the presented token is its parent", async (store, rows) => {
  const { refresh, client, now, familyId, userId } = await exchanged(store, rows);
  const next = pair(now + 1, { grantType: "refresh_token" });
  const result = await rotate(store, refresh, client, now + 1, 0, next);
  assert.equal(result.status === "ok" && result.presented.rotatedAt, null);
  const presented = await store.tokens.findByHash(refresh);
  assert.equal(presented?.rotatedAt, now + 1);
  for (const token of next) {
    const found = await store.tokens.findByHash(token.tokenHash);
    assert.deepEqual([found?.familyId, found?.userId, found?.clientId, found?.grantType], [familyId, userId, client.id, "refresh_token"]);
  }
});

rowsTest("tokens.rotateRefresh: a grace retry is flagged and kills the unreceived pair", async (store, rows) => {
  const { refresh, client, now } = await exchanged(store, rows);
  const lost = pair(now);
  await rotate(store, refresh, client, now, 5, lost);
  const retry = await rotate(store, refresh, client, now + 5, 5, pair(now));
  assert.deepEqual(retry.status === "ok" && retry.retried, true);
  assert.equal(await store.tokens.findActiveAccess(lost[0]!.tokenHash, now + 5), undefined);
  assert.notEqual((await store.tokens.findByHash(lost[1]!.tokenHash))?.revokedAt, null);
});

rowsTest("tokens.rotateRefresh: a second retry, or one after the new pair was used, is reuse", async (store, rows) => {
  const first = await exchanged(store, rows);
  await rotate(store, first.refresh, first.client, NOW, 5, pair(NOW));
  assert.equal((await rotate(store, first.refresh, first.client, NOW + 1, 5, pair(NOW))).status, "ok");
  assert.equal((await rotate(store, first.refresh, first.client, NOW + 2, 5, pair(NOW))).status, "reused");

  const second = await exchanged(store, rows, "web2");
  const received = pair(NOW);
  await rotate(store, second.refresh, second.client, NOW, 5, received);
  assert.equal((await rotate(store, received[1]!.tokenHash, second.client, NOW + 1, 5, pair(NOW))).status, "ok");
  assert.equal((await rotate(store, second.refresh, second.client, NOW + 2, 5, pair(NOW))).status, "reused");
  assert.equal((await store.tokens.findByHash(received[1]!.tokenHash))?.revokedAt, NOW + 2);
});

rowsTest("tokens.rotateRefresh: the pair a retry replaced, presented after all, revokes the family", async (store, rows) => {
  const { refresh, client, now } = await exchanged(store, rows);
  const lost = pair(now);
  await rotate(store, refresh, client, now, 5, lost);
  const retried = pair(now);
  assert.equal((await rotate(store, refresh, client, now + 1, 5, retried)).status, "ok");
  assert.equal((await rotate(store, lost[1]!.tokenHash, client, now + 2, 5, pair(now))).status, "reused");
  assert.equal(await store.tokens.findActiveAccess(retried[0]!.tokenHash, now + 2), undefined);
});

rowsTest("tokens.rotateRefresh: a withdrawn client or disabled user is refused, after reuse detection", async (store, rows) => {
  const { refresh, client, now, userId } = await exchanged(store, rows);
  assert.equal((await rotate(store, refresh, { ...client, secretHash: "old" }, now, 0, pair(now))).status, "client_changed");
  await rows.setUserDisabled(userId, true);
  assert.equal((await rotate(store, refresh, client, now, 0, pair(now))).status, "user_disabled");
  await rows.setUserDisabled(userId, false);
  assert.equal((await rotate(store, refresh, client, now, 0, pair(now))).status, "ok");
  // Reuse is detected whatever the client's state: a rotated token presented again still revokes the family.
  assert.equal((await rotate(store, refresh, { ...client, secretHash: "old" }, now + 1, 0, pair(now))).status, "reused");
});

rowsTest("tokens.rotateRefresh: either refresh token of an imported pair rotates once, and spends the other", async (store, rows) => {
  const client = await webClient(store);
  const userId = await rows.user();
  const { familyId } = await storeCode(store, { client, userId, now: NOW, familyId: "dk_family" });
  const [a, b] = [pair(NOW)[1]!, pair(NOW)[1]!];
  assert.equal(await store.tokens.issue({ clientId: client.id, userId, familyId, tokens: [a, b] }), "issued");
  assert.equal((await rotate(store, b.tokenHash, client, NOW + 1, 0, pair(NOW))).status, "ok");
  assert.equal((await store.tokens.findByHash(a.tokenHash))?.rotatedAt, NOW + 1);
  assert.equal((await rotate(store, a.tokenHash, client, NOW + 2, 0, pair(NOW))).status, "reused");
});

rowsTest("tokens.revoke: access alone, refresh with family, other clients refused, dead tokens unknown", async (store, rows) => {
  const { access, refresh, client, now } = await exchanged(store, rows);
  assert.deepEqual(await store.tokens.revoke(access, client.id + 99, now), { status: "other_client" });
  assert.deepEqual(await store.tokens.revoke(access, client.id, now), { status: "revoked", kind: "access" });
  assert.deepEqual(await store.tokens.revoke(access, client.id, now), { status: "unknown", kind: "access" });
  assert.deepEqual(await store.tokens.revoke(refresh, client.id, now), { status: "revoked", kind: "refresh" });
  assert.deepEqual(await store.tokens.revoke(randomHash(), client.id, now), { status: "unknown" });
});

rowsTest("tokens.revoke of a refresh token revokes its family: nothing more is issued into it", async (store, rows) => {
  const { access, refresh, client, now, familyId, userId } = await exchanged(store, rows);
  await store.tokens.revoke(refresh, client.id, now);
  assert.equal(await store.tokens.findActiveAccess(access, now), undefined);
  assert.equal(await store.tokens.issue({ clientId: client.id, userId, familyId, tokens: pair(now) }), "family_revoked");
  assert.equal(await store.tokens.count(), 2);
});

rowsTest("tokens.revoke of a family-less token revokes just that row", async (store, rows) => {
  const client = await robotClient(store, rows);
  const [token] = pair(NOW, { grantType: "client_credentials" });
  await store.tokens.issue({ clientId: client.id, userId: client.integrationUserId!, familyId: null, tokens: [token!] });
  assert.equal((await store.tokens.revoke(token!.tokenHash, client.id, NOW)).status, "revoked");
  assert.equal((await store.tokens.findByHash(token!.tokenHash))?.revokedAt, NOW);
});

rowsTest("tokens.revokeUserClient revokes every token the user granted the client", async (store, rows) => {
  const { access, client, userId, now } = await exchanged(store, rows);
  assert.equal(await store.tokens.revokeUserClient(userId, client.id, now), 2);
  assert.equal(await store.tokens.findActiveAccess(access, now), undefined);
});

rowsTest("tokens.revokeUserClient leaves another user's tokens, family and consent for the same client alone", async (store, rows) => {
  const client = await webClient(store);
  const approve = async () => {
    const userId = await rows.user();
    const { codeHash, familyId } = await storeCode(store, { client, userId, now: NOW });
    const tokens = pair(NOW);
    assert.equal((await store.tokens.exchangeCode(codeHash, client, NOW, () => ({ issue: { tokens } }))).status, "issued");
    await rows.consent(userId, client.id, "fields:read");
    return { userId, familyId, access: tokens[0]!.tokenHash, refresh: tokens[1]!.tokenHash };
  };
  const ada = await approve();
  const bob = await approve();
  assert.equal(await store.tokens.revokeUserClient(ada.userId, client.id, NOW), 2);
  assert.equal(await store.tokens.findActiveAccess(ada.access, NOW), undefined);
  assert.equal(await rows.consentScope(ada.userId, client.id), undefined);
  // Bob's approval of the same client is untouched: token, refresh token, family and remembered consent.
  assert.ok(await store.tokens.findActiveAccess(bob.access, NOW));
  assert.equal((await store.tokens.findByHash(bob.refresh))?.revokedAt, null);
  assert.equal(await rows.consentScope(bob.userId, client.id), "fields:read");
  // A revoked family takes no more tokens; Bob's still does, Ada's does not.
  const intoFamily = (who: typeof ada) => store.tokens.issue({ clientId: client.id, userId: who.userId, familyId: who.familyId, tokens: [] });
  assert.equal(await intoFamily(bob), "issued");
  assert.equal(await intoFamily(ada), "family_revoked");
});

rowsTest("tokens.issue writes its audit row in the same transaction, and neither when a row fails", async (store, rows) => {
  const client = await robotClient(store, rows);
  const token = (tokenHash: string): NewToken => ({
    tokenHash, kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: NOW, expiresAt: NOW + 1800,
  });
  const audit = { at: NOW, event: "token_issued", clientId: client.clientId, userId: 7, ip: "192.0.2.1", detail: { grant_type: "client_credentials" } };
  const owner = { clientId: client.id, userId: client.integrationUserId!, familyId: null };
  const tokenHash = randomHash();
  assert.equal(await store.tokens.issue({ ...owner, tokens: [token(tokenHash)], audit, authenticated: client }), "issued");
  const events = await rows.auditEvents();
  assert.equal(events.length, 1);
  assert.deepEqual({ ...events[0]!, id: 0 }, { ...audit, id: 0 });
  // A duplicate token hash aborts the transaction: no second token and no audit row for it.
  await assert.rejects(store.tokens.issue({ ...owner, tokens: [token(randomHash()), token(tokenHash)], audit }));
  assert.equal((await rows.auditEvents()).length, 1);
  assert.equal(await store.tokens.count(), 1);
});

rowsTest("tokens.issue re-checks the authenticated client and its user, and then writes nothing", async (store, rows) => {
  const client = await robotClient(store, rows);
  const userId = client.integrationUserId!;
  const issue = (authenticated: AuthenticatedClient) =>
    store.tokens.issue({ clientId: client.id, userId, familyId: null, tokens: [pair(NOW, { grantType: "client_credentials" })[0]!], authenticated });
  assert.equal(await issue(client), "issued");
  const rotated = await store.clients.rotateSecret(client.clientId, { secretHash: "h2", now: NOW, revokeTokens: false });
  assert.equal(await issue(client), "client_changed");
  assert.equal(await issue(rotated!), "issued");
  await rows.setUserDisabled(userId, true);
  assert.equal(await issue(rotated!), "user_disabled");
  await store.clients.setDisabled(client.clientId, true);
  assert.equal(await issue(rotated!), "client_changed");
  assert.equal(await store.tokens.count(), 2);
});
