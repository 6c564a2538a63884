// What the benchmark sends to the peers, and the order comparison servers run around a scenario.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { PEERS, PEER_CLIENT, SCENARIOS, comparedWith, peerClientCredentials } from "../../bench/scenarios.ts";

test("a peer gets RFC 6749's form-encoded client_credentials request with client_secret_post", () => {
  const load = peerClientCredentials("http://127.0.0.1:1");
  assert.equal(load.method, "POST");
  assert.equal(load.path, "/token");
  assert.equal(load.headers?.["content-type"], "application/x-www-form-urlencoded");
  assert.deepEqual(Object.fromEntries(new URLSearchParams(load.body)), {
    grant_type: "client_credentials", client_id: PEER_CLIENT.clientId, client_secret: PEER_CLIENT.clientSecret, scope: PEER_CLIENT.scope,
  });
  assert.equal(load.verifyBody?.('{"access_token":"x","token_type":"Bearer"}'), true);
  assert.equal(load.verifyBody?.('{"error":"invalid_client"}'), false);
});

test("token issuance is compared with the minimal reference first, then every peer, each peer served by bench/peers", () => {
  const token = SCENARIOS.find((s) => s.id === "token")!;
  assert.deepEqual(comparedWith(token.target), ["ref-token", ...PEERS.map((p) => p.id)]);
  for (const peer of PEERS) assert.equal(peer.server.script, "bench/peers/serve.ts");
  assert.deepEqual(comparedWith(undefined), []);
  assert.deepEqual(comparedWith({ beside: "ref-bearer" }), ["ref-bearer"]);
});
