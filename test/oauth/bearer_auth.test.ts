import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { authCodeTokens } from "../helpers/codes.ts";
import { authenticateBearer, requireScope } from "../../src/oauth/bearer_auth.ts";
import { isOAuthError } from "../../src/oauth/errors.ts";

const url = new URL("http://fieldgate.test/graphql");
const bearer = (token: string) => new Request(url, { headers: { authorization: `Bearer ${token}` } });

test("authenticateBearer returns the live token with its scopes; requireScope passes a granted scope", async () => {
  const t = await openTestApp();
  const { tokens, client } = await authCodeTokens(t);
  const access = await authenticateBearer(t.app.deps, bearer(tokens.access_token), url);
  assert.equal(access.token.clientPublicId, client.clientId);
  assert.ok(access.scopes.has("fields:read"));
  requireScope(access, "fields:read");
});

test("requireScope refuses a missing scope with 403 insufficient_scope and a challenge naming it", async () => {
  const t = await openTestApp();
  const { tokens } = await authCodeTokens(t);
  const access = await authenticateBearer(t.app.deps, bearer(tokens.access_token), url);
  assert.throws(
    () => requireScope(access, "fields:write"),
    (e) =>
      isOAuthError(e) && e.code === "insufficient_scope" && e.status === 403 &&
      e.headers["www-authenticate"] ===
        'Bearer realm="fieldgate", error="insufficient_scope", scope="fields:write"',
  );
});

test("authenticateBearer refuses a revoked client's token", async () => {
  const t = await openTestApp();
  const { tokens, client } = await authCodeTokens(t);
  await t.store.clients.rotateSecret(client.clientId, {
    secretHash: "0".repeat(64),
    now: t.clock.nowSeconds(),
    revokeTokens: true,
  });
  await assert.rejects(
    authenticateBearer(t.app.deps, bearer(tokens.access_token), url),
    (e) => isOAuthError(e) && e.code === "invalid_token",
  );
});
