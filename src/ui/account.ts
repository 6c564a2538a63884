// The account page: the applications the user has authorized, each with a button that revokes its access.
import { html } from "./html.ts";
import { layout } from "./layout.ts";
import { describeScope } from "./consent.ts";

export interface AuthorizedApp {
  clientId: string;
  name: string;
  scope: string;
  grantedAt: number;
  /** CSRF token of this app's revoke form. */
  csrf: string;
}

export interface AccountView {
  username: string;
  apps: AuthorizedApp[];
  signOutCsrf: string;
  /** Name of an application whose access was just revoked, for the confirmation line. */
  revoked?: string;
}

function appItem(app: AuthorizedApp) {
  const scopes = app.scope.split(" ").filter(Boolean).map((s) => html`<li>${describeScope(s)}</li>`);
  const date = new Date(app.grantedAt * 1000).toISOString().slice(0, 10);
  return html`<li class="card app-item">
<h3>${app.name}</h3>
<ul class="scopes">${scopes}</ul>
<p class="muted">Authorized on <time datetime="${date}">${date}</time></p>
<form method="post" action="/account/revoke">
<input type="hidden" name="csrf" value="${app.csrf}">
<input type="hidden" name="client_id" value="${app.clientId}">
<button type="submit" class="danger" aria-label="Revoke access for ${app.name}">Revoke access</button>
</form>
</li>`;
}

/** Renders the account page; every value is escaped. */
export function renderAccount(view: AccountView): string {
  const notice = view.revoked ? html`<p class="notice" role="status">Access for ${view.revoked} was revoked.</p>` : "";
  const list = view.apps.length > 0
    ? html`<ul class="apps">${view.apps.map(appItem)}</ul>`
    : html`<p class="muted">You have not authorized any applications.</p>`;
  return layout(
    "Your account",
    html`<h1>Your account</h1>
<p>Signed in as <strong>${view.username}</strong>.</p>
${notice}
<h2>Authorized applications</h2>
${list}
<form method="post" action="/signout" class="inline">
<input type="hidden" name="csrf" value="${view.signOutCsrf}">
<button type="submit">Sign out</button>
</form>`,
  );
}
