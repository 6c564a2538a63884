import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { renderConsent, type ConsentView } from "../../src/ui/consent.ts";

function view(overrides: Partial<ConsentView> = {}): ConsentView {
  return {
    appName: "Field notes app",
    redirectHost: "client.example",
    username: "Demo Farmer",
    scope: "fields:read",
    fields: {
      client_id: "abc",
      response_type: "code",
      redirect_uri: "https://client.example/cb",
      scope: "fields:read",
      state: "a b&c",
      code_challenge: undefined,
      code_challenge_method: undefined,
    },
    csrf: "consent-token",
    signOutCsrf: "signout-token",
    ...overrides,
  };
}

test("consent page: the title names the application", () => {
  assert.match(renderConsent(view()), /<title>Authorize Field notes app · fieldgate<\/title>/);
});

test("consent page: the sign-out form carries the authorization request as next, without the consent token", () => {
  const page = renderConsent(view());
  const form = page.slice(page.indexOf('action="/signout"'));
  const next = form.match(/name="next" value="([^"]*)"/)?.[1]?.replace(/&amp;/g, "&");
  assert.equal(next, "/oauth/authorize?client_id=abc&response_type=code&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&scope=fields%3Aread&state=a+b%26c");
  assert.match(form, /name="csrf" value="signout-token"/);
});

test("consent page: says the approval is remembered until revoked on the account page", () => {
  assert.match(renderConsent(view()), /remembers your approval, so Field notes app will not ask again for this access until you revoke it/);
});

// authorize.ts never remembers approvals of native apps (loopback redirect URI): the page must not promise it.
for (const uri of ["http://127.0.0.1/cb", "http://localhost:8765/cb", "http://[::1]/cb"]) {
  test(`consent page: no promise to remember for a native app at ${uri}`, () => {
    const page = renderConsent(view({ fields: { ...view().fields, redirect_uri: uri } }));
    assert.doesNotMatch(page, /remembers your approval/);
    assert.match(page, /withdraw access at any time/);
  });
}

test("consent page: fields:read says the application also learns the username, the name and the organizations", () => {
  // GraphQL's viewer and organizations answer with a fields:read token; the username is often an e-mail address.
  assert.match(renderConsent(view()), /your username, your name and your organizations&#39; names/);
});

test("consent page: shows the username beside a display name", () => {
  assert.match(renderConsent(view({ account: "demo" })), /Signed in as <strong>Demo Farmer<\/strong> \(username <strong>demo<\/strong>\)/);
  assert.match(renderConsent(view({ username: "demo", account: "demo" })), /Signed in as <strong>demo<\/strong>\./);
});

test("consent page: escapes the application name, the user and the request", () => {
  const page = renderConsent(view({
    appName: "<img src=x>",
    account: '"><b>',
    fields: { ...view().fields, state: '"><script>' },
  }));
  assert.doesNotMatch(page, /<img src=x>|<script>|"><b>/);
});
