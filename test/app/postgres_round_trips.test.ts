// What whole requests cost in PostgreSQL round trips, counted by the pool (the figure /metrics reports): the design
// targets of docs/scaling.md, client-credentials issuance 1 (2 for a client this instance has not read yet), a refresh
// 3 and an introspection 2, with more for client authentication only when it counts or clears a failure.
import assert from "node:assert/strict";
import { codeBody, ccRequest, issueCode, refreshBody, type TokenPair } from "../helpers/codes.ts";
import { postgresTest } from "../helpers/postgres.ts";
import { postJson } from "../helpers/requests.ts";
import { openTestAppOn, type TestApp } from "../helpers/test_app.ts";

const FROM = { remoteAddress: "203.0.113.40" };

/** Round trips `request` costs `t`'s store, its status and its JSON body. */
async function tripsOf(t: TestApp, request: () => Promise<Response>): Promise<{ trips: number; status: number; body: unknown }> {
  const before = t.store.stats!().roundTrips;
  const response = await request();
  const body = await response.json();
  return { trips: t.store.stats!().roundTrips - before, status: response.status, body };
}

/** tripsOf without the body. */
async function costOf(t: TestApp, request: () => Promise<Response>): Promise<{ trips: number; status: number }> {
  const { trips, status } = await tripsOf(t, request);
  return { trips, status };
}

/** An app on `url`, its failure throttle counting in the database as every app's does. */
function appOn(url: string): Promise<TestApp> {
  return openTestAppOn(url, { FIELDGATE_THROTTLE_MAX_FAILURES: "5" });
}

postgresTest("a client_credentials token costs 1 round trip once its client was read; counting or clearing a failure costs more", async (db) => {
  const t = await appOn(db.url);
  try {
    const client = await t.seed.client({ grant: "client_credentials" });
    // The first token reads the client, then issues; the next are decided on that read, and their issuance
    // re-checks it and the gate (TokenClient.remembered).
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(client), FROM)), { trips: 2, status: 200 });
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(client), FROM)), { trips: 1, status: 200 });
    const wrong = { ...client, clientSecret: "wrong" };
    // A failure: the read, then the count under the counter's lock (its audit row is one more statement).
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(wrong), FROM)), { trips: 3, status: 401 });
    for (let i = 0; i < 3; i++) assert.equal((await t.app.fetch(ccRequest(wrong), FROM)).status, 401);
    // The first success after them: the remembered issuance, refused by the gate's failures; then the read, the
    // clear under the lock and the issuance; then 1 again.
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(client), FROM)), { trips: 4, status: 200 });
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(client), FROM)), { trips: 1, status: 200 });
    // The success cleared the four failures: four more do not reach the limit of five, the fifth does. The right
    // secret while the limit holds: the remembered issuance refused, then the read, which refuses.
    for (let i = 0; i < 4; i++) assert.equal((await t.app.fetch(ccRequest(wrong), FROM)).status, 401);
    assert.equal((await t.app.fetch(ccRequest(client), FROM)).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await t.app.fetch(ccRequest(wrong), FROM)).status, 401);
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(client), FROM)), { trips: 2, status: 429 });
    assert.deepEqual(await costOf(t, () => t.app.fetch(ccRequest(wrong), FROM)), { trips: 1, status: 429 });
  } finally {
    await t.store.close();
  }
});

postgresTest("a refresh costs 3 round trips", async (db) => {
  const t = await appOn(db.url);
  try {
    const client = await t.seed.client();
    const issued = await issueCode(t, client);
    const exchanged = await t.app.fetch(postJson("/oauth/token", codeBody(client, issued)), FROM);
    assert.equal(exchanged.status, 200);
    let tokens = await exchanged.json() as TokenPair;
    for (let i = 0; i < 2; i++) {
      const next = await tripsOf(t, () => t.app.fetch(postJson("/oauth/token", refreshBody(client, tokens.refresh_token)), FROM));
      assert.deepEqual([next.trips, next.status], [3, 200]);
      tokens = next.body as TokenPair;
    }
  } finally {
    await t.store.close();
  }
});

postgresTest("introspection by a resource server costs 2 round trips and 2 statements: authentication, one read", async (db) => {
  const t = await appOn(db.url);
  try {
    const client = await t.seed.client({ grant: "client_credentials" });
    const rs = await t.seed.client({ grant: null });
    const issued = await t.app.fetch(ccRequest(client), FROM);
    const token = ((await issued.json()) as { access_token: string }).access_token;
    const creds = { client_id: rs.clientId, client_secret: rs.clientSecret };
    for (const asked of [token, "fgat_unknown"]) {
      const before = t.store.stats!().statements;
      const answer = await tripsOf(t, () => t.app.fetch(postJson("/oauth/introspect", { ...creds, token: asked }), FROM));
      assert.deepEqual([answer.trips, answer.status, t.store.stats!().statements - before], [2, 200, 2]);
      assert.equal((answer.body as { active: boolean }).active, asked === token);
    }
  } finally {
    await t.store.close();
  }
});
