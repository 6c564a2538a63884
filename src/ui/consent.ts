// The consent page: names the application and each scope in plain words, with Approve and Deny buttons.
import { KNOWN_SCOPES } from "../config.ts";
import { isLoopbackRedirectUri } from "../oauth/redirect_uri.ts";
import { html } from "./html.ts";
import { layout } from "./layout.ts";

export interface ConsentView {
  appName: string;
  /** Host the browser returns to, shown so the user sees where the answer goes. */
  redirectHost: string;
  /** Who is signed in, as the page names them (display name, else username). */
  username: string;
  /** The username they signed in with, shown beside a display name so the account is unambiguous. */
  account?: string;
  scope: string;
  /** Hidden fields repeating the exact request being approved; the CSRF token is bound to them. */
  fields: Record<string, string | undefined>;
  csrf: string;
  signOutCsrf: string;
  /** Why the page is shown again instead of the decision taking effect (a form from another session, say). */
  notice?: string;
}

/** Plain-words description of a scope; unknown scopes are shown by name. */
export function describeScope(scope: string): string {
  return (KNOWN_SCOPES as Record<string, string>)[scope] ?? scope;
}

/** The GET URL (path and query) of the authorization request the page shows, from its hidden fields. */
function requestPath(fields: ConsentView["fields"]): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) query.set(name, value);
  return `/oauth/authorize?${query}`;
}

/** Renders the consent page; every value is escaped. */
export function renderConsent(view: ConsentView): string {
  const who = view.account && view.account !== view.username
    ? html`<strong>${view.username}</strong> (username <strong>${view.account}</strong>)`
    : html`<strong>${view.username}</strong>`;
  // True while authorize.ts remembers approvals (its \`remembered\`): for every client except those on a loopback
  // redirect URI, which ask each time (RFC 8252 §8.6); revoking on /account forgets the approval.
  const remembered = !isLoopbackRedirectUri(view.fields.redirect_uri ?? null)
    ? html` fieldgate remembers your approval, so ${view.appName} will not ask again for this access until you revoke it there.`
    : "";
  const scopes = view.scope.split(" ").filter(Boolean).map((s) => html`<li><strong>${describeScope(s)}</strong> <span class="muted">(${s})</span></li>`);
  const hidden = Object.entries(view.fields)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return layout(
    `Authorize ${view.appName}`,
    html`<h1>Allow <span class="app">${view.appName}</span> to access your account?</h1>
${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ""}
<div class="card">
<p>Signed in as ${who}.</p>
<p><strong>${view.appName}</strong> is asking to:</p>
<ul class="scopes">${scopes}</ul>
<p class="muted">It will not see your password. You can withdraw access at any time on your <a href="/account">account page</a>.${remembered}
After you decide you will be sent back to <strong>${view.redirectHost}</strong>.</p>
<form method="post" action="/oauth/authorize" class="actions">
<input type="hidden" name="csrf" value="${view.csrf}">
${hidden}
<button type="submit" name="decision" value="approve" class="primary">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</div>
<form method="post" action="/signout" class="inline">
<input type="hidden" name="csrf" value="${view.signOutCsrf}">
<input type="hidden" name="next" value="${requestPath(view.fields)}">
<span class="muted">Not ${view.username}?</span> <button type="submit" class="link">Sign out</button>
</form>`,
  );
}
