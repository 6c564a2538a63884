// DPoP end to end, driven by oauth4webapi as an independent client (RFC 9449): client credentials, code, refresh and
// /graphql against a listening server; then a proof spent at one instance refused at another on PostgreSQL.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { calculateJwkThumbprint, type JWK } from "jose";
import { toNodeListener } from "../../src/adapters/node_listener.ts";
import { openTestApp, openTestAppOn, type TestApp } from "../helpers/test_app.ts";
import { ccRequest, issueCode } from "../helpers/codes.ts";
import { makeProof, proofKey } from "../helpers/dpop.ts";
import { postgresTest } from "../helpers/postgres.ts";

async function listen(env: Record<string, string> = {}): Promise<{ server: Server; origin: string; t: TestApp }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await openTestApp({ FIELDGATE_BASE_URL: origin, ...env });
  server.on("request", toNodeListener(t.app, origin));
  return { server, origin, t };
}

const insecure = { [oauth.allowInsecureRequests]: true };

/** A client whose proofs carry the app's fake time: oauth4webapi adds the skew to its clock for `iat`. */
function clientOf(t: TestApp, clientId: string): oauth.Client {
  return { client_id: clientId, [oauth.clockSkew]: t.clock.nowSeconds() - Math.floor(Date.now() / 1000) };
}

test("oauth4webapi obtains DPoP tokens by client credentials, code bound with dpop_jkt and refresh, and reads /graphql with them", async () => {
  const { server, origin, t } = await listen();
  try {
    const issuer = new URL(origin);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
    assert.deepEqual(as.dpop_signing_alg_values_supported, ["ES256", "EdDSA", "Ed25519"]);

    const robot = await t.seed.client({ grant: "client_credentials" });
    const robotClient = clientOf(t, robot.clientId);
    const DPoP = oauth.DPoP(robotClient, await oauth.generateKeyPair("ES256"));
    const cc = await oauth.processClientCredentialsResponse(as, robotClient, await oauth.clientCredentialsGrantRequest(
      as, robotClient, oauth.ClientSecretBasic(robot.clientSecret), new URLSearchParams(), { ...insecure, DPoP },
    ));
    assert.equal(cc.token_type, "dpop");

    const query = JSON.stringify({ query: "{ __typename }" });
    const graphql = await oauth.protectedResourceRequest(cc.access_token, "POST", new URL(`${origin}/graphql`),
      new Headers({ "content-type": "application/json" }), query, { ...insecure, DPoP });
    assert.equal(graphql.status, 200);
    assert.deepEqual(await graphql.json(), { data: { __typename: "Query" } });
    const asBearer = await fetch(`${origin}/graphql`, {
      method: "POST", body: query, headers: { authorization: `Bearer ${cc.access_token}`, "content-type": "application/json" },
    });
    assert.equal(asBearer.status, 401, "a stolen DPoP token is useless as a Bearer token");
    await asBearer.body?.cancel();

    const app = await t.seed.client();
    const appClient = clientOf(t, app.clientId);
    const appAuth = oauth.ClientSecretPost(app.clientSecret);
    const appKeys = await oauth.generateKeyPair("EdDSA");
    const appDPoP = oauth.DPoP(appClient, appKeys);
    const verifier = oauth.generateRandomCodeVerifier();
    // The code as /oauth/authorize issues it for a request naming dpop_jkt (RFC 9449 §10).
    const dpopJkt = await calculateJwkThumbprint(await crypto.subtle.exportKey("jwk", appKeys.publicKey) as JWK);
    const issued = await issueCode(t, app, { verifier, dpopJkt });
    const callback = new URL(`${issued.redirectUri}?code=${issued.code}&iss=${encodeURIComponent(origin)}`);
    const params = oauth.validateAuthResponse(as, appClient, callback, oauth.expectNoState);
    const code = await oauth.processAuthorizationCodeResponse(as, appClient, await oauth.authorizationCodeGrantRequest(
      as, appClient, appAuth, params, issued.redirectUri, verifier, { ...insecure, DPoP: appDPoP },
    ));
    assert.equal(code.token_type, "dpop");
    const refreshed = await oauth.processRefreshTokenResponse(as, appClient, await oauth.refreshTokenGrantRequest(
      as, appClient, appAuth, code.refresh_token!, { ...insecure, DPoP: appDPoP },
    ));
    assert.equal(refreshed.token_type, "dpop");
    const introspected = await oauth.processIntrospectionResponse(as, appClient,
      await oauth.introspectionRequest(as, appClient, appAuth, refreshed.access_token, insecure));
    assert.equal(introspected.token_type, "DPoP");
    assert.equal(typeof introspected.cnf?.jkt, "string");
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

postgresTest("a DPoP proof spent at one instance is refused at another sharing the database", async (db) => {
  const one = await openTestAppOn(db.url);
  const two = await openTestAppOn(db.url);
  try {
    const client = await one.seed.client({ grant: "client_credentials" });
    const proof = await makeProof(await proofKey(), { htu: "http://fieldgate.test/oauth/token", iat: one.clock.nowSeconds() });
    const send = (t: TestApp) => {
      const request = ccRequest(client);
      request.headers.set("dpop", proof);
      return t.app.fetch(request);
    };
    assert.equal((await send(one)).status, 200);
    const replayed = await send(two);
    assert.equal(replayed.status, 400);
    assert.equal((await replayed.json()).error, "invalid_dpop_proof");
  } finally {
    await one.store.close();
    await two.store.close();
  }
});

/** `attempt` once more when the server asked for a DPoP nonce, as RFC 9449 §8 has a client do. */
async function withNonceRetry<T>(attempt: () => Promise<T>): Promise<{ result: T; retried: boolean }> {
  try {
    return { result: await attempt(), retried: false };
  } catch (error) {
    if (!oauth.isDPoPNonceError(error)) throw error;
    return { result: await attempt(), retried: true };
  }
}

test("with server nonces on, oauth4webapi retries once with the nonce the server sent, at the token endpoint and /graphql", async () => {
  const { server, origin, t } = await listen({ FIELDGATE_DPOP_NONCE: "true" });
  try {
    const issuer = new URL(origin);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
    const robot = await t.seed.client({ grant: "client_credentials" });
    const client = clientOf(t, robot.clientId);
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair("ES256"));
    const cc = await withNonceRetry(async () =>
      oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(
        as, client, oauth.ClientSecretBasic(robot.clientSecret), new URLSearchParams(), { ...insecure, DPoP },
      ))
    );
    assert.equal(cc.retried, true, "the first proof carried no nonce");
    assert.equal(cc.result.token_type, "dpop");
    const query = JSON.stringify({ query: "{ __typename }" });
    const graphql = await withNonceRetry(async () => {
      const response = await oauth.protectedResourceRequest(cc.result.access_token, "POST", new URL(`${origin}/graphql`),
        new Headers({ "content-type": "application/json" }), query, { ...insecure, DPoP });
      return response;
    });
    assert.equal(graphql.retried, false, "the nonce from the token endpoint is still current at /graphql");
    assert.equal(graphql.result.status, 200);
    await graphql.result.body?.cancel();

    // Code and refresh with a key of their own: its first proof carries no nonce, and the refresh's the cached one.
    const app = await t.seed.client();
    const appClient = clientOf(t, app.clientId);
    const appAuth = oauth.ClientSecretPost(app.clientSecret);
    const appDPoP = oauth.DPoP(appClient, await oauth.generateKeyPair("ES256"));
    const issued = await issueCode(t, app);
    const callback = new URL(`${issued.redirectUri}?code=${issued.code}&iss=${encodeURIComponent(origin)}`);
    const params = oauth.validateAuthResponse(as, appClient, callback, oauth.expectNoState);
    const code = await withNonceRetry(async () =>
      oauth.processAuthorizationCodeResponse(as, appClient, await oauth.authorizationCodeGrantRequest(
        as, appClient, appAuth, params, issued.redirectUri, oauth.nopkce, { ...insecure, DPoP: appDPoP },
      ))
    );
    assert.equal(code.result.token_type, "dpop");
    const refreshed = await withNonceRetry(async () =>
      oauth.processRefreshTokenResponse(as, appClient, await oauth.refreshTokenGrantRequest(
        as, appClient, appAuth, code.result.refresh_token!, { ...insecure, DPoP: appDPoP },
      ))
    );
    assert.equal(refreshed.retried, false, "the nonce cached from the code exchange is current");
    assert.equal(refreshed.result.token_type, "dpop");
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

postgresTest("a DPoP nonce one instance hands out is accepted by another sharing the database", async (db) => {
  const env = { FIELDGATE_DPOP_NONCE: "true" };
  const one = await openTestAppOn(db.url, env);
  const two = await openTestAppOn(db.url, env);
  try {
    const client = await one.seed.client({ grant: "client_credentials" });
    const key = await proofKey();
    const send = async (t: TestApp, claims: Record<string, unknown>) => {
      const request = ccRequest(client);
      request.headers.set("dpop", await makeProof(key, { htu: "http://fieldgate.test/oauth/token", iat: t.clock.nowSeconds(), claims }));
      return t.app.fetch(request);
    };
    const asked = await send(one, {});
    assert.equal((await asked.json()).error, "use_dpop_nonce");
    const nonce = asked.headers.get("dpop-nonce");
    assert.ok(nonce);
    assert.equal((await send(two, { nonce })).status, 200);
  } finally {
    await one.store.close();
    await two.store.close();
  }
});
