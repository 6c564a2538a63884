// The PostgreSQL references answer as the benchmark's comparison assumes: a real token per request written to the
// database, the client's secret checked, a bearer looked up, a refresh token rotated once.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { postgresTest, type TestDatabase } from "../helpers/postgres.ts";
import { REFERENCE_BEARER_TOKEN } from "../../bench/scenarios.ts";
import { seedReferenceDatabase } from "../../bench/pg_reference_db.ts";
import type { Seeded } from "../../bench/seed.ts";
import { withReferenceServer } from "../helpers/reference_server.ts";

const SCRIPT = fileURLToPath(new URL("../../bench/references_postgres.ts", import.meta.url));

const SEEDED: Seeded = {
  path: "unused",
  ccClient: { clientId: "cc", clientSecret: "cc-secret" },
  authClient: { clientId: "app", clientSecret: "app-secret", redirectUri: "http://127.0.0.1/cb" },
  resourceServer: { clientId: "rs", clientSecret: "rs-secret" },
  user: { username: "u", password: "p" },
  refreshTokens: ["refresh-one", "refresh-two"],
  timings: {},
};

/** Starts the reference of `kind` on the seeded database at `db`, runs `check` against its origin, then stops it. */
function withReference(db: TestDatabase, kind: string, check: (origin: string) => Promise<void>) {
  return withReferenceServer(SCRIPT, ["--kind", kind, "--port", "0", "--database", db.url], check);
}

async function post(origin: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(origin + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

const cc = (secret: string) => ({ grant_type: "client_credentials", client_id: "cc", client_secret: secret });

postgresTest("reference 2 checks the client's secret and issues a different token per request", async (db) => {
  await seedReferenceDatabase(db.url, SEEDED, Math.floor(Date.now() / 1000));
  await withReference(db, "token2", async (origin) => {
    const [a, b] = [await post(origin, "/oauth/token", cc("cc-secret")), await post(origin, "/oauth/token", cc("cc-secret"))];
    assert.deepEqual([a.status, b.status], [200, 200]);
    assert.notEqual(a.body.access_token, b.body.access_token);
    for (const secret of ["cc-secreT", "", "cc-secret-longer"]) {
      assert.equal((await post(origin, "/oauth/token", cc(secret))).status, 401, secret);
    }
  });
});

postgresTest("the count reference accepts the reference token only, and a refresh token rotates once", async (db) => {
  await seedReferenceDatabase(db.url, SEEDED, Math.floor(Date.now() / 1000));
  await withReference(db, "count", async (origin) => {
    const ok = await post(origin, "/graphql", {}, { authorization: `Bearer ${REFERENCE_BEARER_TOKEN}` });
    assert.deepEqual(ok, { status: 200, body: { data: { fields: { total_count: 500 } } } });
    assert.equal((await post(origin, "/graphql", {}, { authorization: "Bearer refresh-one" })).status, 401);
  });
  await withReference(db, "refresh", async (origin) => {
    const body = { grant_type: "refresh_token", client_id: "app", client_secret: "app-secret", refresh_token: "refresh-one" };
    const first = await post(origin, "/oauth/token", body);
    assert.equal(first.status, 200);
    assert.equal((await post(origin, "/oauth/token", body)).status, 400);
    const next = await post(origin, "/oauth/token", { ...body, refresh_token: first.body.refresh_token });
    assert.equal(next.status, 200);
    assert.equal((await post(origin, "/oauth/token", { ...body, client_secret: "wrong", refresh_token: "refresh-two" })).status, 401);
  });
});
