// OAuthError: the status each code implies.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { invalidClient, invalidToken, OAuthError, tooManyRequests } from "../../src/oauth/errors.ts";

test("each code carries its RFC status, and an explicit status or headers override it", () => {
  assert.equal(invalidClient("no").status, 401);
  assert.equal(new OAuthError("unauthorized_client", "no", { status: 403 }).status, 403);
  const limited = tooManyRequests(2.2);
  assert.equal(limited.status, 429);
  assert.deepEqual(limited.headers, { "retry-after": "3" });
});
