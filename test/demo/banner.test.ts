// The one-time demo credentials block.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { formatDemoBanner } from "../../src/demo/banner.ts";
import type { DemoSeed } from "../../src/demo/seed.ts";

const seed: DemoSeed = {
  organization: "demo-farm",
  username: "demo",
  password: "pw-0123456789abcd",
  fields: 8,
  authorizationCodeClient: { client_id: "web-id", client_secret: "fgcs_web", redirect_uri: "http://localhost:8080/demo/callback", scope: "fields:read" },
  clientCredentialsClient: { client_id: "sync-id", client_secret: "fgcs_sync", integration_user: "demo-integration", scope: "fields:read" },
};

test("the banner shows the sign-in, both clients and working curl examples", () => {
  const text = formatDemoBanner(seed, { baseUrl: "http://localhost:8080", credentialsPath: "data/demo-credentials.json" });
  for (const value of ["demo", "pw-0123456789abcd", "web-id", "fgcs_web", "sync-id", "fgcs_sync", "data/demo-credentials.json"]) {
    assert.ok(text.includes(value), value);
  }
  assert.ok(text.includes(`-d '{"grant_type":"client_credentials","client_id":"sync-id","client_secret":"fgcs_sync"}'`));
  assert.ok(text.includes(`curl -s http://localhost:8080/graphql`));
  assert.ok(text.includes(`{"query":"{ fields { total_count } }"}`));
});

test("without a credentials file the banner says the credentials are stored nowhere else", () => {
  assert.match(formatDemoBanner(seed, { baseUrl: "http://x" }), /not stored anywhere else/);
});
