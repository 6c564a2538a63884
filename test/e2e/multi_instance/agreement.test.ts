// Three `serve` instances over one PostgreSQL database agree at once on tokens, clients, sign-in and throttles, over
// real sockets: whatever one instance or the CLI changed, the next request on any instance sees.
import assert from "node:assert/strict";
import { postgresTest } from "../../helpers/postgres.ts";
import { countFields, postJson } from "../../helpers/instances.ts";
import { clientToken, codeAcross, exchange, isActiveAt, refresh, withCluster } from "./fixtures.ts";

postgresTest("a token issued on one instance works on the others, and revoked on one is refused by all", async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const token = await clientToken(a, cluster.sync);
    for (const at of [b, c, a]) assert.equal((await countFields(at.origin, token)).status, 200, `bearer on ${at.name}`);
    const revoked = await postJson(b.origin, "/oauth/revoke", { ...cluster.sync, token });
    assert.equal(revoked.status, 200);
    for (const at of [a, c, b]) {
      const res = await countFields(at.origin, token);
      assert.equal(res.status, 401, `revoked token on ${at.name}`);
    }
    // A refresh token revoked on one instance takes its family on every instance.
    const pair = await exchange(c, cluster, await codeAcross(cluster, { form: a, signIn: a, consent: a, approve: a }));
    assert.equal(pair.status, 200);
    const { access_token: access, refresh_token: refreshToken } = pair.json as Record<string, string>;
    assert.equal((await countFields(a.origin, access!)).status, 200);
    assert.equal((await postJson(b.origin, "/oauth/revoke", { ...cluster.web, token: refreshToken! })).status, 200);
    assert.equal((await countFields(a.origin, access!)).status, 401, "the family's access token on A");
    const again = await refresh(c, cluster, refreshToken!);
    assert.equal(again.status, 400);
    assert.equal(again.json?.error, "invalid_grant");
  });
});

postgresTest("a client rotated or disabled with the CLI is refused by every instance on its next request", async (db) => {
  await withCluster(db.url, async (cluster) => {
    // Each instance has just authenticated the client and checked one of its tokens: nothing it remembers may outlive
    // the CLI's change.
    const tokens = new Map<string, string>();
    for (const at of cluster.all) {
      const token = await clientToken(at, cluster.sync);
      assert.equal((await countFields(at.origin, token)).status, 200);
      tokens.set(at.name, token);
    }
    const rotated = await cluster.cliJson(["clients", "rotate-secret", cluster.sync.client_id]);
    const fresh = { client_id: cluster.sync.client_id, client_secret: rotated.client_secret as string };
    assert.notEqual(fresh.client_secret, cluster.sync.client_secret);
    for (const at of cluster.all) {
      const old = await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...cluster.sync });
      assert.equal(old.status, 401, `old secret on ${at.name}`);
      assert.equal(old.json?.error, "invalid_client");
      assert.equal((await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...fresh })).status, 200);
    }
    const disabled = await cluster.cli(["clients", "disable", cluster.sync.client_id]);
    assert.equal(disabled.code, 0, disabled.stderr);
    for (const at of cluster.all) {
      const res = await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...fresh });
      assert.equal(res.status, 401, `disabled client on ${at.name}`);
      assert.equal(res.json?.error, "invalid_client");
      for (const [issuedOn, token] of tokens) {
        assert.equal((await countFields(at.origin, token)).status, 401, `token from ${issuedOn} on ${at.name}`);
      }
    }
  });
});

postgresTest("sign in on one instance, the consent page from a second, approve on a third: the code works anywhere", async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const code = await codeAcross(cluster, { form: c, signIn: a, consent: b, approve: c });
    const pair = await exchange(b, cluster, code);
    assert.equal(pair.status, 200, JSON.stringify(pair.json));
    const access = pair.json!.access_token as string;
    for (const at of cluster.all) assert.equal(await isActiveAt(at, cluster.web, access), true, `token on ${at.name}`);
    const rotated = await refresh(a, cluster, pair.json!.refresh_token as string);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
  });
});

postgresTest("failed client authentications on one instance lock the client out on the others", async (db) => {
  await withCluster(db.url, async (cluster) => {
    const { a, b, c } = cluster;
    const wrong = { client_id: cluster.sync.client_id, client_secret: "fgcs_wrong" };
    const statuses: number[] = [];
    // The limit is 3 failures; at most 6 attempts are made to see A refuse with 429.
    while (statuses.length < 6 && statuses.at(-1) !== 429) {
      statuses.push((await postJson(a.origin, "/oauth/token", { grant_type: "client_credentials", ...wrong })).status);
    }
    assert.equal(statuses.at(-1), 429, `statuses on A: ${statuses.join(" ")}`);
    for (const at of [b, c]) {
      const res = await postJson(at.origin, "/oauth/token", { grant_type: "client_credentials", ...cluster.sync });
      assert.equal(res.status, 429, `the right secret on ${at.name} while locked out`);
      assert.ok(Number(res.headers.get("retry-after")) > 0, "Retry-After");
    }
  }, { FIELDGATE_THROTTLE_MAX_FAILURES: "3" });
});
