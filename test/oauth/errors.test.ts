// OAuthError: the status each code implies, and no stack captured (protocol errors are answers, not faults).
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

test("an OAuthError captures no stack frames and leaves the global stack limit as it was", () => {
  const before = Error.stackTraceLimit;
  const error = invalidToken("The access token is invalid");
  assert.equal(Error.stackTraceLimit, before);
  assert.equal(error.message, "The access token is invalid");
  assert.doesNotMatch(String(error.stack), /\n\s+at /);
  // Other errors still get theirs.
  assert.match(String(new Error("fault").stack), /\n\s+at /);
});

test("the stack limit is restored even when building the error throws", () => {
  const before = Error.stackTraceLimit;
  const hostile = { get cause(): unknown {
    throw new RangeError("cause getter");
  } };
  assert.throws(() => new OAuthError("invalid_request", "x", hostile as never), RangeError);
  assert.equal(Error.stackTraceLimit, before);
});
