import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildTestApp, type TestApp } from "../helpers/test_app.ts";
import { sha256Hex } from "../../src/crypto/hash.ts";
import { issueCode } from "../helpers/codes.ts";
import type { NewToken } from "../../src/store/tokens.ts";
import type { AuthenticatedClient } from "../../src/store/still_authorized.ts";

let counter = 0;
const hash = () => sha256Hex(`token-${++counter}-${Math.random()}`);

async function pair(now: number, scope = "fields:read"): Promise<NewToken[]> {
  return [
    {
      tokenHash: await hash(),
      kind: "access",
      grantType: "authorization_code",
      scope,
      issuedAt: now,
      expiresAt: now + 100,
    },
    {
      tokenHash: await hash(),
      kind: "refresh",
      grantType: "authorization_code",
      scope,
      issuedAt: now,
      expiresAt: now + 1000,
    },
  ];
}

async function exchanged(t: TestApp) {
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const now = t.clock.nowSeconds();
  const tokens = await pair(now);
  const result = await t.store.tokens.exchangeCode(await sha256Hex(issued.code), client.client, now, () => ({ issue: { tokens } }));
  assert.equal(result.status, "issued");
  return { client, issued, now, access: tokens[0]!.tokenHash, refresh: tokens[1]!.tokenHash };
}

test("tokens.exchangeCode issues into the code's family and reports details", async () => {
  const t = buildTestApp();
  const { access, client, issued, now } = await exchanged(t);
  const details = await t.store.tokens.findActiveAccess(access, now);
  assert.equal(details?.clientPublicId, client.clientId);
  assert.equal(details?.familyId, issued.familyId);
  assert.equal(details?.userKind, "person");
  assert.equal(await t.store.tokens.count(), 2);
});

test("tokens.exchangeCode uses up the code even when decide refuses", async () => {
  const t = buildTestApp();
  const client = await t.seed.client();
  const issued = await issueCode(t, client);
  const codeHash = await sha256Hex(issued.code);
  const refused = await t.store.tokens.exchangeCode(codeHash, client.client, t.clock.nowSeconds(), () => ({ refuse: "why" }));
  assert.deepEqual(refused.status === "refused" && refused.reason, "why");
  assert.equal(
    (await t.store.tokens.exchangeCode(codeHash, client.client, t.clock.nowSeconds(), () => ({ issue: { tokens: [] } }))).status,
    "reused",
  );
});

test("tokens.findActiveAccess excludes expired, refresh and disabled-user tokens", async () => {
  const t = buildTestApp();
  const { access, refresh, now, issued } = await exchanged(t);
  assert.ok(await t.store.tokens.findActiveAccess(access, now + 99));
  assert.equal(await t.store.tokens.findActiveAccess(access, now + 100), undefined);
  assert.equal(await t.store.tokens.findActiveAccess(refresh, now), undefined);
  await t.store.users.setDisabled(issued.userId, true);
  assert.equal(await t.store.tokens.findActiveAccess(access, now), undefined);
});

function rotate(
  t: TestApp,
  refreshHash: string,
  client: AuthenticatedClient,
  now: number,
  graceSeconds = 0,
  tokens?: NewToken[],
) {
  return t.store.tokens.rotateRefresh({
    refreshHash,
    client,
    now,
    graceSeconds,
    next: () => (tokens ? { tokens } : undefined),
  });
}

test("tokens.rotateRefresh: ok once, then reuse revokes the family", async () => {
  const t = buildTestApp();
  const { refresh, client, now } = await exchanged(t);
  const next = await pair(now);
  assert.equal((await rotate(t, refresh, client.client, now, 0, next)).status, "ok");
  assert.equal((await rotate(t, refresh, client.client, now + 1, 0, await pair(now))).status, "reused");
  assert.equal(await t.store.tokens.findActiveAccess(next[0]!.tokenHash, now + 1), undefined);
  assert.equal(
    (await rotate(t, next[1]!.tokenHash, client.client, now + 1, 0, await pair(now))).status,
    "invalid",
  );
});

test("tokens.rotateRefresh: invalid for another client, an expired token, or a refusing next", async () => {
  const t = buildTestApp();
  const { refresh, client, now } = await exchanged(t);
  assert.equal((await rotate(t, refresh, { ...client.client, id: client.client.id + 99 }, now, 0, await pair(now))).status, "invalid");
  assert.equal(
    (await rotate(t, refresh, client.client, now + 1000, 0, await pair(now))).status,
    "invalid",
  );
  assert.equal((await rotate(t, refresh, client.client, now)).status, "invalid");
  // A refusing next rolls back: the token is still good.
  assert.equal((await rotate(t, refresh, client.client, now, 0, await pair(now))).status, "ok");
});

test("tokens.rotateRefresh: a grace retry is flagged and kills the unreceived pair", async () => {
  const t = buildTestApp();
  const { refresh, client, now } = await exchanged(t);
  const lost = await pair(now);
  await rotate(t, refresh, client.client, now, 5, lost);
  const retry = await rotate(t, refresh, client.client, now + 5, 5, await pair(now));
  assert.deepEqual(retry.status === "ok" && retry.retried, true);
  assert.equal(await t.store.tokens.findActiveAccess(lost[0]!.tokenHash, now + 5), undefined);
});

test("tokens.revoke: access alone, refresh with family, other clients refused, dead tokens unknown", async () => {
  const t = buildTestApp();
  const { access, refresh, client, now } = await exchanged(t);
  assert.deepEqual(await t.store.tokens.revoke(access, client.client.id + 99, now), {
    status: "other_client",
  });
  assert.deepEqual(await t.store.tokens.revoke(access, client.client.id, now), {
    status: "revoked",
    kind: "access",
  });
  assert.deepEqual(await t.store.tokens.revoke(access, client.client.id, now), {
    status: "unknown",
    kind: "access",
  });
  assert.deepEqual(await t.store.tokens.revoke(refresh, client.client.id, now), {
    status: "revoked",
    kind: "refresh",
  });
  assert.deepEqual(await t.store.tokens.revoke("0".repeat(64), client.client.id, now), { status: "unknown" });
});

test("tokens.revoke of a family-less token revokes just that row", async () => {
  const t = buildTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const now = t.clock.nowSeconds();
  const tokenHash = await hash();
  await t.store.tokens.issue({
    clientId: client.client.id,
    userId: client.client.integrationUserId!,
    familyId: null,
    tokens: [
      {
        tokenHash,
        kind: "access",
        grantType: "client_credentials",
        scope: "fields:read",
        issuedAt: now,
        expiresAt: now + 1800,
      },
    ],
  });
  assert.equal((await t.store.tokens.revoke(tokenHash, client.client.id, now)).status, "revoked");
  assert.equal((await t.store.tokens.findByHash(tokenHash))?.revokedAt, now);
});

test("tokens.revokeUserClient revokes every token the user granted the client", async () => {
  const t = buildTestApp();
  const { access, client, issued, now } = await exchanged(t);
  assert.equal(await t.store.tokens.revokeUserClient(issued.userId, client.client.id, now), 2);
  assert.equal(await t.store.tokens.findActiveAccess(access, now), undefined);
});

test("tokens.revokeUserClient leaves another user's tokens, family and consent for the same client alone", async () => {
  const t = buildTestApp();
  const client = await t.seed.client();
  const now = t.clock.nowSeconds();
  const approve = async (username: string) => {
    const user = await t.seed.user({ username });
    const issued = await issueCode(t, client, { userId: user.id });
    const tokens = await pair(now);
    assert.equal((await t.store.tokens.exchangeCode(await sha256Hex(issued.code), client.client, now, () => ({ issue: { tokens } }))).status, "issued");
    await t.store.consents.grant(user.id, client.client.id, { scope: "fields:read", now });
    return { user, issued, access: tokens[0]!.tokenHash, refresh: tokens[1]!.tokenHash };
  };
  const ada = await approve("ada@example.com");
  const bob = await approve("bob@example.com");
  assert.equal(await t.store.tokens.revokeUserClient(ada.user.id, client.client.id, now), 2);
  assert.equal(await t.store.tokens.findActiveAccess(ada.access, now), undefined);
  assert.equal(await t.store.consents.find(ada.user.id, client.client.id), undefined);
  // Bob's approval of the same client is untouched: token, refresh token, family and remembered consent.
  assert.ok(await t.store.tokens.findActiveAccess(bob.access, now));
  assert.equal((await t.store.tokens.findByHash(bob.refresh))?.revokedAt, null);
  assert.ok(await t.store.consents.find(bob.user.id, client.client.id));
  // A revoked family takes no more tokens; Bob's still does, Ada's does not.
  const intoFamily = (who: typeof ada) =>
    t.store.tokens.issue({ clientId: client.client.id, userId: who.user.id, familyId: who.issued.familyId, tokens: [] });
  assert.equal(await intoFamily(bob), "issued");
  assert.equal(await intoFamily(ada), "family_revoked");
});

test("tokens.issue writes its audit row in the same transaction, and neither when a row fails", async () => {
  const t = buildTestApp();
  const client = await t.seed.client({ grant: "client_credentials" });
  const now = t.clock.nowSeconds();
  const token = (tokenHash: string): NewToken => ({
    tokenHash, kind: "access", grantType: "client_credentials", scope: "fields:read", issuedAt: now, expiresAt: now + 1800,
  });
  const audit = { at: now, event: "token_issued", clientId: client.client.clientId, userId: 7, ip: "192.0.2.1", detail: { grant_type: "client_credentials" } };
  const owner = { clientId: client.client.id, userId: client.client.integrationUserId!, familyId: null };
  const before = (await t.store.audit.list({})).length;
  const tokenHash = await hash();
  assert.equal(await t.store.tokens.issue({ ...owner, tokens: [token(tokenHash)], audit }), "issued");
  const rows = await t.store.audit.list({});
  assert.equal(rows.length, before + 1);
  assert.deepEqual({ ...rows.at(-1)!, id: 0 }, { ...audit, id: 0 });
  // A duplicate token hash aborts the transaction: no second token and no audit row for it.
  await assert.rejects(t.store.tokens.issue({ ...owner, tokens: [token(await hash()), token(tokenHash)], audit }));
  assert.equal((await t.store.audit.list({})).length, before + 1);
});
