import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeListener } from "../../src/adapters/node_listener.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { codeTokens, issueCode, jsonPost } from "../security/grants.ts";

const N = 50;

interface Served {
  t: TestApp;
  base: string;
  close(): Promise<void>;
}

/** The test app behind a real node:http server on 127.0.0.1, port chosen by the OS. */
async function serve(): Promise<Served> {
  const t = await openTestApp();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on("request", toNodeListener(t.app, base));
  return {
    t,
    base,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function statusAndError(res: Response): Promise<string> {
  const body = await res.json() as { error?: string };
  return res.status === 200 ? "200" : `${res.status} ${body.error}`;
}

function tally(results: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) out[r] = (out[r] ?? 0) + 1;
  return out;
}

const info = (s: Served, token: string) =>
  fetch(`${s.base}/oauth/token/info`, { headers: { authorization: `Bearer ${token}` } });

test(`${N} concurrent exchanges of one authorization code: exactly one 200`, async () => {
  const s = await serve();
  try {
    const client = await s.t.seed.client();
    const user = await s.t.seed.user();
    const code = await issueCode(s.t.store, client, user.id, s.t.clock.nowSeconds());
    const body = { grant_type: "authorization_code", client_id: client.clientId, client_secret: client.clientSecret, code, redirect_uri: client.client.redirectUri! };
    const responses = await Promise.all(Array.from({ length: N }, () => fetch(jsonPost(s.base, "/oauth/token", body))));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ access_token: string; error?: string }>));
    assert.deepEqual(tally(responses.map((r, i) => r.status === 200 ? "200" : `${r.status} ${bodies[i]!.error}`)), { "200": 1, "400 invalid_grant": N - 1 });
    const winner = bodies[responses.findIndex((r) => r.status === 200)]!;
    // The replays revoked the approval (RFC 6749 §4.1.2): the one pair issued is no longer alive.
    assert.equal(await s.t.store.tokens.count(), 2);
    assert.equal((await info(s, winner.access_token)).status, 401);
    assert.deepEqual(await s.t.store.maintenance!.integrityCheck(), ["ok"]);
  } finally {
    await s.close();
  }
});

test(`${N} concurrent refreshes of one refresh token: one new pair, the rest reuse, and the family ends up revoked`, async () => {
  const s = await serve();
  try {
    const client = await s.t.seed.client();
    const user = await s.t.seed.user();
    const fetcher = (r: Request) => fetch(r);
    const first = await codeTokens(fetcher, { store: s.t.store, client, userId: user.id, now: s.t.clock.nowSeconds(), base: s.base });
    const body = { grant_type: "refresh_token", client_id: client.clientId, client_secret: client.clientSecret, refresh_token: first.refresh_token! };
    const responses = await Promise.all(Array.from({ length: N }, () => fetch(jsonPost(s.base, "/oauth/token", body))));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ access_token?: string; refresh_token?: string; error?: string }>));
    const winners = bodies.filter((_, i) => responses[i]!.status === 200);
    assert.equal(winners.length, 1, JSON.stringify(tally(responses.map((r) => String(r.status)))));
    assert.ok(bodies.every((b, i) => responses[i]!.status === 200 || b.error === "invalid_grant"));
    const reuse = (await s.t.store.audit.list({})).filter((e) => e.event === "refresh_reuse_detected");
    // The first replay detects the reuse and revokes the family; later ones meet an already revoked token.
    assert.ok(reuse.length >= 1);
    // Reuse detection (RFC 9700 §4.14.2) killed the whole family, the winner's new pair included.
    for (const token of [first.access_token, winners[0]!.access_token!]) assert.equal((await info(s, token)).status, 401);
    const again = await fetch(jsonPost(s.base, "/oauth/token", { ...body, refresh_token: winners[0]!.refresh_token! }));
    assert.equal(await statusAndError(again), "400 invalid_grant");
    assert.deepEqual(await s.t.store.maintenance!.integrityCheck(), ["ok"]);
  } finally {
    await s.close();
  }
});

for (const kind of ["access_token", "refresh_token"] as const) {
  test(`concurrent revoke (${kind}) and use: once revoke has answered 200, no request with the token succeeds`, async () => {
    const s = await serve();
    try {
      const client = await s.t.seed.client();
      const user = await s.t.seed.user();
      const pair = await codeTokens((r) => fetch(r), { store: s.t.store, client, userId: user.id, now: s.t.clock.nowSeconds(), base: s.base });
      const creds = { client_id: client.clientId, client_secret: client.clientSecret };
      const use = () => kind === "access_token"
        ? info(s, pair.access_token)
        : fetch(jsonPost(s.base, "/oauth/token", { ...creds, grant_type: "refresh_token", refresh_token: pair.refresh_token! }));
      const before = Array.from({ length: N }, use);
      const revoked = await fetch(jsonPost(s.base, "/oauth/revoke", { ...creds, token: pair[kind]!, token_type_hint: kind }));
      assert.equal(revoked.status, 200);
      const racing = await Promise.all(before);
      assert.ok(racing.every((r) => r.status === 200 || r.status === 400 || r.status === 401), "only success or refusal while racing");
      const after = await Promise.all(Array.from({ length: N }, use));
      assert.deepEqual(tally(after.map((r) => String(r.status))), { [kind === "access_token" ? "401" : "400"]: N });
      // Revoking a refresh token revokes its family (RFC 7009 §2.1), so the access token is dead as well.
      if (kind === "refresh_token") assert.equal((await info(s, pair.access_token)).status, 401);
      assert.deepEqual(await s.t.store.maintenance!.integrityCheck(), ["ok"]);
    } finally {
      await s.close();
    }
  });
}
