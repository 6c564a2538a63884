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
  /** Unexpired sign-in sessions of this user in other browsers. */
  otherSessions: number;
  signOutOthersCsrf: string;
  /** This session just signed the others out, for the confirmation line. */
  othersEnded: boolean;
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

function otherBrowsers(view: AccountView) {
  if (view.otherSessions === 0) return html`<p class="muted">You are not signed in anywhere else.</p>`;
  const count = view.otherSessions === 1 ? "1 other browser" : `${view.otherSessions} other browsers`;
  return html`<p>You are also signed in on ${count}.</p>
<form method="post" action="/account/signout-others">
<input type="hidden" name="csrf" value="${view.signOutOthersCsrf}">
<button type="submit" class="danger">Sign out everywhere else</button>
</form>`;
}

/** Renders the account page; every value is escaped. */
export function renderAccount(view: AccountView): string {
  const notices = [
    view.revoked ? html`<p class="notice" role="status">Access for ${view.revoked} was revoked.</p>` : "",
    view.othersEnded ? html`<p class="notice" role="status">You were signed out everywhere else.</p>` : "",
  ];
  const list = view.apps.length > 0
    ? html`<ul class="apps">${view.apps.map(appItem)}</ul>`
    : html`<p class="muted">You have not authorized any applications.</p>`;
  return layout(
    "Your account",
    html`<h1>Your account</h1>
<p>Signed in as <strong>${view.username}</strong>.</p>
${notices}
<h2>Authorized applications</h2>
${list}
<h2>Other browsers</h2>
${otherBrowsers(view)}
<form method="post" action="/signout" class="inline">
<input type="hidden" name="csrf" value="${view.signOutCsrf}">
<button type="submit">Sign out</button>
</form>`,
  );
}
