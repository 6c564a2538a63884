import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { hmacSha256Base64Url } from "../../src/crypto/hmac.ts";

test("hmacSha256Base64Url matches RFC 4231 test case 2, as unpadded base64url", async () => {
  // HMAC-SHA256("Jefe", "what do ya want for nothing?") = 5bdcc146…64ec3843
  assert.equal(await hmacSha256Base64Url("Jefe", "what do ya want for nothing?"), "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM");
});
