// The sign-in page: username and password form, posting to /signin with a CSRF token bound to the pre-session.
import { html } from "./html.ts";
import { layout } from "./layout.ts";
import { MAX_USERNAME_LENGTH } from "../store/rows.ts";

export interface SignInView {
  /** Where to go after signing in (a local path, already validated). */
  next: string;
  csrf: string;
  /** Name of the application asking for access, when sign-in started at /oauth/authorize. */
  appName?: string;
  username?: string;
  /** Why the last attempt did not sign in: announced in the title, and every input points at it. */
  error?: string;
  /** The username or password was refused (not merely a timed-out form): both inputs are marked invalid. */
  rejected?: boolean;
  /** Information above the form that is not an error, such as a session that ended. */
  notice?: string;
}

const ERROR_ID = "signin-error";

/** Renders the sign-in page; every value is escaped. */
export function renderSignIn(view: SignInView): string {
  const lead = view.appName
    ? html`<p><strong>${view.appName}</strong> wants to access your fieldgate account. Sign in to continue.</p>`
    : html`<p>Sign in to manage the applications you have authorized.</p>`;
  const error = view.error ? html`<p class="error" role="alert" id="${ERROR_ID}">${view.error}</p>` : "";
  const notice = view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : "";
  // After a failed attempt a screen reader user lands in the field to fill in (the password, or the username when
  // it is empty) and hears the error read as that field's description: no script needed (WCAG 3.3.1).
  const describedBy = view.error ? html` aria-describedby="${ERROR_ID}"` : "";
  const invalid = view.error && view.rejected ? html` aria-invalid="true"` : "";
  const focus = view.error ? (view.username ? "password" : "username") : undefined;
  const state = (field: "username" | "password") => html`${describedBy}${invalid}${focus === field ? html` autofocus` : ""}`;
  return layout(
    view.error ? "Error: Sign in" : "Sign in",
    html`<h1>Sign in</h1>
${lead}
${notice}
${error}
<form method="post" action="/signin" class="card">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="next" value="${view.next}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false"
 required maxlength="${MAX_USERNAME_LENGTH}" value="${view.username ?? ""}"${state("username")}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${state("password")}>
<button type="submit" class="primary">Sign in</button>
</form>`,
  );
}
