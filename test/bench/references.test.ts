// The reference servers answer as the benchmark's verdicts assume: a real token per request, a real bearer check.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { REFERENCE_BEARER_TOKEN } from "../../bench/scenarios.ts";
import { withReferenceServer } from "../helpers/reference_server.ts";

const SCRIPT = fileURLToPath(new URL("../../bench/references.ts", import.meta.url));

/** Starts `references.ts --kind <kind>` on a free port, runs `check` against its origin, then stops it. */
function withReference(kind: "token" | "bearer", check: (origin: string) => Promise<void>) {
  return withReferenceServer(SCRIPT, ["--kind", kind, "--port", "0"], check);
}

const post = (origin: string, path: string, headers: Record<string, string> = {}) =>
  fetch(origin + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });

test("the token reference mints a different token per request and answers the token response's fields", async () => {
  await withReference("token", async (origin) => {
    const bodies = [];
    for (let i = 0; i < 2; i++) {
      const response = await post(origin, "/oauth/token");
      assert.equal(response.status, 200);
      bodies.push(await response.json() as Record<string, unknown>);
    }
    assert.deepEqual(Object.keys(bodies[0]!).sort(), ["access_token", "created_at", "expires_in", "scope", "token_type"]);
    assert.match(String(bodies[0]!.access_token), /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(bodies[0]!.access_token, bodies[1]!.access_token);
  });
});

test("the bearer reference answers its one token and refuses any other", async () => {
  await withReference("bearer", async (origin) => {
    const ok = await post(origin, "/graphql", { authorization: `Bearer ${REFERENCE_BEARER_TOKEN}` });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { data: { fields: { total_count: 500 } } });
    const wrong = await post(origin, "/graphql", { authorization: `Bearer ${REFERENCE_BEARER_TOKEN}x` });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const none = await post(origin, "/graphql");
    assert.equal(none.status, 401);
    await none.body?.cancel();
  });
});
