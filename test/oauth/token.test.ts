import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp } from "../helpers/test_app.ts";
import { BASE, basicAuth, postForm, postJson } from "../helpers/requests.ts";
import {
  acCreds,
  ccCreds,
  codeBody,
  type ErrorRow,
  testErrorRows,
  tokenFixture,
  type TokenFixture,
  tokenInfo,
} from "../helpers/codes.ts";

function assertNoStore(res: Response): void {
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("pragma"), "no-cache");
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
}

test("token exchanges a code for the Doorkeeper-shaped response with no-store headers", async () => {
  const f = await tokenFixture();
  const res = await f.t.app.fetch(postJson("/oauth/token", codeBody(f.ac, f.code)));
  assert.equal(res.status, 200);
  assertNoStore(res);
  const body = await res.json();
  assert.deepEqual(Object.keys(body), [
    "access_token",
    "token_type",
    "expires_in",
    "refresh_token",
    "scope",
    "created_at",
  ]);
  assert.equal(body.token_type, "Bearer");
  assert.equal(body.expires_in, 28_800);
  assert.equal(body.scope, "fields:read");
  assert.equal(body.created_at, f.t.clock.nowSeconds());
  assert.match(body.access_token, /^fgat_[0-9a-f]{12}[A-Za-z0-9_-]{43}$/);
  assert.match(body.refresh_token, /^fgrt_[0-9a-f]{12}[A-Za-z0-9_-]{43}$/);
});

test("token accepts a form body with HTTP Basic client authentication", async () => {
  const f = await tokenFixture();
  const { client_id: _id, client_secret: _secret, ...rest } = codeBody(f.ac, f.code);
  const res = await f.t.app.fetch(
    postForm("/oauth/token", rest, { authorization: basicAuth(f.ac.clientId, f.ac.clientSecret) }),
  );
  assert.equal(res.status, 200);
  assert.equal((await res.json()).token_type, "Bearer");
});

test("token accepts Basic plus a body client_id naming the same client", async () => {
  const f = await tokenFixture();
  const { client_secret: _secret, ...rest } = codeBody(f.ac, f.code);
  const res = await f.t.app.fetch(
    postForm("/oauth/token", rest, { authorization: basicAuth(f.ac.clientId, f.ac.clientSecret) }),
  );
  assert.equal(res.status, 200);
});

test("token accepts a JSON content type with a charset parameter", async () => {
  const f = await tokenFixture();
  const res = await f.t.app.fetch(
    postJson("/oauth/token", codeBody(f.ac, f.code), { "content-type": "application/json; charset=utf-8" }),
  );
  assert.equal(res.status, 200);
});

// RFC 6749 §3.2: the authorization server MUST ignore unrecognized request parameters, whatever their shape.
const IGNORED_ROWS: { name: string; request: (f: TokenFixture) => Request }[] = [
  { name: "an unknown JSON parameter with a number value", request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), extra: 1 }) },
  { name: "an unknown JSON parameter with an object value", request: (f) => postJson("/oauth/token", { ...codeBody(f.ac, f.code), resource: { a: [1] } }) },
  { name: "an unknown JSON parameter named __proto__", request: (f) => postJson("/oauth/token", `{"__proto__":{"x":1},${JSON.stringify(codeBody(f.ac, f.code)).slice(1)}`) },
  {
    name: "an unknown form parameter sent twice",
    request: (f) => {
      const form = new URLSearchParams(codeBody(f.ac, f.code));
      form.append("resource", "https://a.example");
      form.append("resource", "https://b.example");
      return postForm("/oauth/token", form.toString());
    },
  },
];

for (const row of IGNORED_ROWS) {
  test(`token ignores ${row.name} (RFC 6749 §3.2)`, async () => {
    const f = await tokenFixture();
    const res = await f.t.app.fetch(row.request(f));
    assert.equal(res.status, 200);
    assert.equal((await res.json()).token_type, "Bearer");
  });
}

test("token never stores the plaintext tokens and never logs them", async () => {
  const f = await tokenFixture();
  const res = await f.t.app.fetch(postJson("/oauth/token", codeBody(f.ac, f.code)));
  const body = await res.json();
  const logged = JSON.stringify(f.t.log);
  for (const secret of [body.access_token, body.refresh_token, f.code.code, f.ac.clientSecret]) {
    assert.ok(!logged.includes(secret));
  }
  assert.equal(await f.t.store.tokens.findByHash(body.access_token), undefined);
  const events = await f.t.store.audit.list({});
  assert.ok(events.some((e) => e.event === "token_issued" && e.clientId === f.ac.clientId));
  assert.ok(!JSON.stringify(events).includes(body.access_token));
});

const ROWS: ErrorRow[] = [
  {
    name: "missing grant_type",
    request: (f) => postJson("/oauth/token", { ...acCreds(f) }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "password grant",
    request: (f) => postJson("/oauth/token", { ...acCreds(f), grant_type: "password" }),
    status: 400,
    error: "unsupported_grant_type",
  },
  {
    name: "prototype-named grant",
    request: (f) => postJson("/oauth/token", { ...acCreds(f), grant_type: "constructor" }),
    status: 400,
    error: "unsupported_grant_type",
  },
  {
    name: "no client credentials",
    request: () => postJson("/oauth/token", { grant_type: "client_credentials" }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "unknown client_id",
    request: (f) =>
      postJson("/oauth/token", {
        grant_type: "client_credentials",
        client_id: "nope",
        client_secret: f.cc.clientSecret,
      }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "wrong secret",
    request: (f) =>
      postJson("/oauth/token", {
        grant_type: "client_credentials",
        client_id: f.cc.clientId,
        client_secret: f.ac.clientSecret,
      }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "missing secret",
    request: (f) => postJson("/oauth/token", { grant_type: "client_credentials", client_id: f.cc.clientId }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "secret in the query string",
    request: (f) =>
      new Request(`${BASE}/oauth/token?client_secret=${f.cc.clientSecret}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", ...ccCreds(f) }),
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "code in the query string",
    request: (f) =>
      new Request(`${BASE}/oauth/token?code=${f.code.code}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(codeBody(f.ac, f.code)),
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "Basic and body secret together",
    request: (f) =>
      postForm("/oauth/token", { grant_type: "client_credentials", client_secret: f.cc.clientSecret }, {
        authorization: basicAuth(f.cc.clientId, f.cc.clientSecret),
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "Basic with a different body client_id",
    request: (f) =>
      postForm("/oauth/token", { grant_type: "client_credentials", client_id: f.ac.clientId }, {
        authorization: basicAuth(f.cc.clientId, f.cc.clientSecret),
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    // RFC 6749 §5.2: an unsupported authentication method is invalid_client, even beside valid body credentials.
    name: "Bearer scheme at the token endpoint",
    request: (f) =>
      postForm("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f) }, {
        authorization: "Bearer abc",
      }),
    status: 401,
    error: "invalid_client",
  },
  {
    name: "Basic that is not base64",
    request: () =>
      postForm("/oauth/token", { grant_type: "client_credentials" }, { authorization: "Basic %%%" }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "Basic without a colon",
    request: () =>
      postForm("/oauth/token", { grant_type: "client_credentials" }, {
        authorization: `Basic ${btoa("nocolon")}`,
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "Basic with bad percent-encoding",
    request: () =>
      postForm("/oauth/token", { grant_type: "client_credentials" }, {
        authorization: `Basic ${btoa("a%zz:b")}`,
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "Basic that is not UTF-8",
    request: () =>
      postForm("/oauth/token", { grant_type: "client_credentials" }, {
        authorization: `Basic ${btoa("\xff\xfe:x")}`,
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "unknown content type",
    request: (f) =>
      new Request(`${BASE}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ grant_type: "client_credentials", ...ccCreds(f) }),
      }),
    status: 415,
    error: "invalid_request",
  },
  {
    name: "no content type",
    request: () => new Request(`${BASE}/oauth/token`, { method: "POST", body: "x" }),
    status: 415,
    error: "invalid_request",
  },
  {
    name: "malformed JSON",
    request: () => postJson("/oauth/token", "{not json"),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "JSON array body",
    request: () => postJson("/oauth/token", "[]"),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "non-string JSON value",
    request: (f) =>
      postJson("/oauth/token", {
        grant_type: "client_credentials",
        client_id: f.cc.clientId,
        client_secret: 42,
      }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "repeated form parameter",
    request: (f) =>
      postForm(
        "/oauth/token",
        `grant_type=client_credentials&grant_type=client_credentials&client_id=${f.cc.clientId}`,
      ),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "a recognized JSON parameter that is an array",
    request: (f) => postJson("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f), scope: ["fields:read"] }),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "a recognized form parameter sent twice next to ignored ones",
    request: (f) =>
      postForm("/oauth/token", `grant_type=client_credentials&extra=1&extra=2&client_id=${f.cc.clientId}&client_id=${f.cc.clientId}`),
    status: 400,
    error: "invalid_request",
  },
  {
    // JSON.parse would keep the last client_id; a proxy reading the first would see another client.
    name: "a recognized JSON member sent twice",
    request: (f) =>
      postJson("/oauth/token", `{"grant_type":"client_credentials","client_id":"bogus","client_id":"${f.cc.clientId}","client_secret":"${f.cc.clientSecret}"}`),
    status: 400,
    error: "invalid_request",
  },
  {
    name: "client_credentials by an authorization-code client",
    request: (f) => postJson("/oauth/token", { grant_type: "client_credentials", ...acCreds(f) }),
    status: 400,
    error: "unauthorized_client",
  },
];

testErrorRows(ROWS);

test("invalid_client always carries the Basic challenge: HTTP requires one on every 401 (RFC 9110 §15.5.2)", async () => {
  const f = await tokenFixture();
  const basic = await f.t.app.fetch(
    postForm("/oauth/token", { grant_type: "client_credentials" }, {
      authorization: basicAuth(f.cc.clientId, "wrong"),
    }),
  );
  assert.equal(basic.status, 401);
  assert.equal(basic.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
  const post = await f.t.app.fetch(
    postJson("/oauth/token", {
      grant_type: "client_credentials",
      client_id: f.cc.clientId,
      client_secret: "wrong",
    }),
  );
  assert.equal(post.status, 401);
  assert.equal(post.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
  const bearer = await f.t.app.fetch(
    postJson("/oauth/token", { grant_type: "client_credentials" }, { authorization: "Bearer abc" }),
  );
  assert.equal(bearer.status, 401);
  assert.equal(bearer.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
  const none = await f.t.app.fetch(postJson("/oauth/token", { grant_type: "client_credentials" }));
  assert.equal(none.status, 401);
  assert.equal(none.headers.get("www-authenticate"), 'Basic realm="fieldgate"');
});

test("a disabled client is invalid_client, its tokens stop working, and a code it presents is not spent", async () => {
  const f = await tokenFixture();
  await f.t.store.clients.setDisabled(f.ac.clientId, true);
  const res = await f.t.app.fetch(postJson("/oauth/token", codeBody(f.ac, f.code)));
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_client");
  assert.equal((await tokenInfo(f.t, f.pair.access_token)).status, 401);
  // Refused in client authentication, before the exchange: the code was never claimed, so it still works once the
  // client is enabled again (a refusal inside the exchange would have used it up).
  await f.t.store.clients.setDisabled(f.ac.clientId, false);
  const again = await f.t.app.fetch(postJson("/oauth/token", codeBody(f.ac, f.code)));
  assert.equal(again.status, 200);
});

test("a rotated-out secret is invalid_client, the new one works", async () => {
  const f = await tokenFixture();
  const { sha256Hex } = await import("../../src/crypto/hash.ts");
  await f.t.store.clients.rotateSecret(f.cc.clientId, {
    secretHash: await sha256Hex("fgcs_new-secret"),
    now: f.t.clock.nowSeconds(),
    revokeTokens: false,
  });
  const old = await f.t.app.fetch(
    postJson("/oauth/token", { grant_type: "client_credentials", ...ccCreds(f) }),
  );
  assert.equal(old.status, 401);
  assert.equal((await old.json()).error, "invalid_client");
  const fresh = await f.t.app.fetch(
    postJson("/oauth/token", {
      grant_type: "client_credentials",
      client_id: f.cc.clientId,
      client_secret: "fgcs_new-secret",
    }),
  );
  assert.equal(fresh.status, 200);
});

test("token is POST only", async () => {
  const t = await openTestApp();
  const res = await t.app.fetch(new Request(`${BASE}/oauth/token`));
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "POST");
});
