import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";
import { BASE } from "../helpers/requests.ts";

const ORIGIN = "https://app.example";

function preflight(origin: string): Request {
  return new Request(`${BASE}/graphql`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
  });
}

test("CORS is off by default: no CORS headers and no preflight route", async () => {
  const { t, acmeToken } = await buildWorld();
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ __typename }" }, { origin: ORIGIN }));
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  const pre = await t.app.fetch(preflight(ORIGIN));
  assert.equal(pre.status, 405);
  assert.equal(pre.headers.get("access-control-allow-origin"), null);
});

test("a configured origin gets a preflight answer and CORS headers without credentials", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_CORS_ORIGINS: ORIGIN });
  const pre = await t.app.fetch(preflight(ORIGIN));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), ORIGIN);
  assert.match(pre.headers.get("access-control-allow-methods") ?? "", /POST/);
  assert.match(pre.headers.get("access-control-allow-headers") ?? "", /authorization/);
  // A browser client may send its own X-Request-Id to correlate with the server's log.
  assert.match(pre.headers.get("access-control-allow-headers") ?? "", /(^|, )x-request-id(,|$)/);
  // A browser DPoP client sends its proof in a DPoP header (RFC 9449 §7).
  assert.match(pre.headers.get("access-control-allow-headers") ?? "", /(^|, )dpop(,|$)/);
  assert.equal(pre.headers.get("access-control-allow-credentials"), null);
  assert.match(pre.headers.get("vary") ?? "", /Origin/);
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ __typename }" }, { origin: ORIGIN }));
  assert.equal(res.headers.get("access-control-allow-origin"), ORIGIN);
  assert.match(res.headers.get("vary") ?? "", /Origin/);
});

test("a refused request still carries CORS headers so the browser can read the 401", async () => {
  const { t } = await buildWorld({ FIELDGATE_CORS_ORIGINS: ORIGIN });
  const res = await t.app.fetch(graphqlRequest(undefined, { query: "{ __typename }" }, { origin: ORIGIN }));
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("access-control-allow-origin"), ORIGIN);
  assert.match(res.headers.get("access-control-expose-headers") ?? "", /www-authenticate/);
  // A browser DPoP client must read the nonce the server asks for (RFC 9449 §9).
  assert.match(res.headers.get("access-control-expose-headers") ?? "", /(^|, )dpop-nonce(,|$)/);
});

test("an origin not on the list gets no CORS headers", async () => {
  const { t, acmeToken } = await buildWorld({ FIELDGATE_CORS_ORIGINS: ORIGIN });
  const pre = await t.app.fetch(preflight("https://evil.example"));
  assert.equal(pre.headers.get("access-control-allow-origin"), null);
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query: "{ __typename }" }, { origin: "https://evil.example" }));
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  assert.match(res.headers.get("vary") ?? "", /Origin/);
});

test("a method /graphql does not serve gets a 405 with Vary: Origin when CORS is on, like every /graphql response", async () => {
  for (const [env, vary] of [[{ FIELDGATE_CORS_ORIGINS: ORIGIN }, "Origin"], [{}, null]] as const) {
    const { t, acmeToken } = await buildWorld(env);
    const res = await t.app.fetch(new Request(`${BASE}/graphql`, { method: "PUT", headers: { authorization: `Bearer ${acmeToken}`, origin: ORIGIN } }));
    assert.equal(res.status, 405);
    assert.match(res.headers.get("allow") ?? "", /POST/);
    assert.equal(res.headers.get("vary"), vary);
  }
});

test("CORS applies to /graphql only", async () => {
  const { t } = await buildWorld({ FIELDGATE_CORS_ORIGINS: ORIGIN });
  const res = await t.app.fetch(new Request(`${BASE}/healthz`, { headers: { origin: ORIGIN } }));
  assert.equal(res.headers.get("access-control-allow-origin"), null);
});
