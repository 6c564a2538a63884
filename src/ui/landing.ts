// The landing page at /: what fieldgate is, its endpoints, and (in demo mode) the button that starts the walkthrough.
import { html } from "./html.ts";
import { layout } from "./layout.ts";

export interface LandingView {
  baseUrl: string;
  demo: boolean;
  signedIn?: string;
  /** Arrived from sign-out: say so, since the page otherwise looks the same as before. */
  signedOut?: boolean;
}

const ENDPOINTS: ReadonlyArray<readonly [string, string]> = [
  ["GET /oauth/authorize", "Start of the authorization code flow: the user signs in and approves or denies access"],
  ["POST /oauth/token", "Exchange a code, refresh a token, or use client credentials (JSON body)"],
  ["POST /oauth/revoke", "Revoke an access or refresh token (RFC 7009)"],
  ["GET /.well-known/oauth-authorization-server", "Authorization server metadata (RFC 8414)"],
  ["POST /graphql", "Field data, with an access token in the Authorization header"],
  ["GET /account", "The applications you have authorized, with a button to revoke each"],
];

/** Renders the landing page; every value is escaped. */
export function renderLanding(view: LandingView): string {
  const rows = ENDPOINTS.map(([path, what]) => html`<tr><th scope="row"><code>${path}</code></th><td>${what}</td></tr>`);
  const demo = view.demo
    ? html`<section class="card demo" aria-labelledby="demo-heading">
<h2 id="demo-heading">Try the demo</h2>
<p>Walk through the whole authorization code flow as an application would: sign in as the demo user, approve access,
then see the token response and the result of <code>{ fields { total_count } }</code>. From there you can refresh and
revoke the tokens. The demo application's secret stays on the server.</p>
<p>Sign in as <strong>demo</strong> with the password <code>npm start</code> printed in its terminal when it created
the demo data.</p>
<p><a class="button primary" href="${view.baseUrl}/demo/start">Try the demo</a></p>
</section>`
    : "";
  const signedOut = view.signedOut ? html`<p class="notice" role="status">You have signed out.</p>` : "";
  const account = view.signedIn
    ? html`<p>Signed in as <strong>${view.signedIn}</strong>. <a href="/account">Your authorized applications</a></p>`
    : html`<p><a href="/signin">Sign in</a> to see the applications you have authorized.</p>`;
  return layout(
    "Delegated access to field data",
    html`<h1>fieldgate</h1>
${signedOut}
<p class="lead">An OAuth 2.0 authorization server with a GraphQL API for field data. Applications get access tokens
either on behalf of a signed-in user (authorization code grant, with consent) or as a server-to-server integration
(client credentials grant), and use them to query fields.</p>
${demo}
${account}
<h2>Endpoints</h2>
<div class="table-wrap"><table>
<caption>Relative to <code>${view.baseUrl}</code></caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Purpose</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`,
  );
}
