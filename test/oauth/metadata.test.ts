import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { get } from "../helpers/requests.ts";

test("metadata publishes the RFC 8414 document with the configured issuer", async () => {
  const t = await openTestApp({ FIELDGATE_BASE_URL: "https://auth.example.org/" });
  const res = await t.app.fetch(get("/.well-known/oauth-authorization-server"));
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = await res.json();
  assert.equal(body.issuer, "https://auth.example.org");
  assert.equal(body.authorization_endpoint, "https://auth.example.org/oauth/authorize");
  assert.equal(body.token_endpoint, "https://auth.example.org/oauth/token");
  assert.equal(body.revocation_endpoint, "https://auth.example.org/oauth/revoke");
  assert.equal(body.introspection_endpoint, "https://auth.example.org/oauth/introspect");
  assert.deepEqual(body.grant_types_supported, ["authorization_code", "refresh_token", "client_credentials"]);
  assert.deepEqual(body.response_types_supported, ["code"]);
  assert.deepEqual(body.code_challenge_methods_supported, ["S256"]);
  assert.deepEqual(body.scopes_supported, ["fields:read"]);
  // RFC 9449 §5.1: the proof algorithms the server accepts.
  assert.deepEqual(body.dpop_signing_alg_values_supported, ["ES256", "EdDSA", "Ed25519"]);
  for (
    const key of [
      "token_endpoint_auth_methods_supported",
      "revocation_endpoint_auth_methods_supported",
      "introspection_endpoint_auth_methods_supported",
    ]
  ) {
    assert.deepEqual(body[key], ["client_secret_post", "client_secret_basic"], key);
  }
  assert.equal(body.authorization_response_iss_parameter_supported, true);
});

test("every endpoint the metadata names is routed", async () => {
  const t = await openTestApp();
  const body = await (await t.app.fetch(get("/.well-known/oauth-authorization-server"))).json();
  for (const key of ["token_endpoint", "revocation_endpoint", "introspection_endpoint"]) {
    const res = await t.app.fetch(
      new Request(body[key], { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    );
    assert.notEqual(res.status, 404, key);
  }
});
