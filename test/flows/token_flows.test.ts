import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { toNodeListener } from "../../src/adapters/node_listener.ts";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { issueCode } from "../helpers/codes.ts";

// One end-to-end run against a real listening server, driven by oauth4webapi as an independent,
// standards-based client: discovery, client credentials, authorization code + PKCE, refresh, revocation.

async function listen(): Promise<{ server: Server; origin: string; t: TestApp }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await openTestApp({ FIELDGATE_BASE_URL: origin });
  server.on("request", toNodeListener(t.app, origin));
  return { server, origin, t };
}

const insecure = { [oauth.allowInsecureRequests]: true };

test("oauth4webapi completes client credentials, authorization code with PKCE, refresh and revocation", async () => {
  const { server, origin, t } = await listen();
  try {
    const issuer = new URL(origin);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }),
    );
    assert.equal(as.token_endpoint, `${origin}/oauth/token`);

    // Client credentials with client_secret_basic: an access token and no refresh token.
    const robot = await t.seed.client({ grant: "client_credentials" });
    const robotClient: oauth.Client = { client_id: robot.clientId };
    const cc = await oauth.processClientCredentialsResponse(
      as,
      robotClient,
      await oauth.clientCredentialsGrantRequest(
        as,
        robotClient,
        oauth.ClientSecretBasic(robot.clientSecret),
        new URLSearchParams({ scope: "fields:read" }),
        insecure,
      ),
    );
    assert.equal(cc.token_type, "bearer");
    assert.equal(cc.expires_in, 1_800);
    assert.equal(cc.refresh_token, undefined);
    const robotAuth = oauth.ClientSecretBasic(robot.clientSecret);
    const ccInfo = await oauth.processIntrospectionResponse(
      as,
      robotClient,
      await oauth.introspectionRequest(as, robotClient, robotAuth, cc.access_token, insecure),
    );
    assert.equal(ccInfo.active, true);

    // Authorization code with PKCE and client_secret_post; the code comes from the store (the authorize page is
    // exercised elsewhere), the callback carries iss as RFC 9207 requires since the metadata advertises it.
    const app = await t.seed.client();
    const appClient: oauth.Client = { client_id: app.clientId };
    const appAuth = oauth.ClientSecretPost(app.clientSecret);
    const verifier = oauth.generateRandomCodeVerifier();
    const issued = await issueCode(t, app, { verifier });
    const callback = new URL(`${issued.redirectUri}?code=${issued.code}&iss=${encodeURIComponent(origin)}`);
    const params = oauth.validateAuthResponse(as, appClient, callback, oauth.expectNoState);
    const codeTokens = await oauth.processAuthorizationCodeResponse(
      as,
      appClient,
      await oauth.authorizationCodeGrantRequest(
        as,
        appClient,
        appAuth,
        params,
        issued.redirectUri,
        verifier,
        insecure,
      ),
    );
    assert.equal(codeTokens.expires_in, 28_800);
    assert.equal(codeTokens.scope, "fields:read");
    assert.equal(typeof codeTokens.created_at, "number");
    assert.ok(codeTokens.refresh_token);

    // Refresh without redirect_uri (libraries never send it): a rotated pair.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      appClient,
      await oauth.refreshTokenGrantRequest(
        as,
        appClient,
        appAuth,
        codeTokens.refresh_token!,
        insecure,
      ),
    );
    assert.notEqual(refreshed.refresh_token, codeTokens.refresh_token);
    assert.equal(refreshed.expires_in, 28_800);

    // Revoke the refresh token: the whole family, including the fresh access token, is gone.
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, appClient, appAuth, refreshed.refresh_token!, insecure),
    );
    const after = await oauth.processIntrospectionResponse(
      as,
      appClient,
      await oauth.introspectionRequest(as, appClient, appAuth, refreshed.access_token, insecure),
    );
    assert.equal(after.active, false);
    const info = await fetch(`${origin}/oauth/token/info`, {
      headers: { authorization: `Bearer ${refreshed.access_token}` },
    });
    assert.equal(info.status, 401);
    await info.body?.cancel();

    // The old refresh token is now refused with an RFC 6749 error the library understands.
    await assert.rejects(
      oauth.processRefreshTokenResponse(
        as,
        appClient,
        await oauth.refreshTokenGrantRequest(as, appClient, appAuth, codeTokens.refresh_token!, insecure),
      ),
      (e) => e instanceof oauth.ResponseBodyError && e.error === "invalid_grant",
    );
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
