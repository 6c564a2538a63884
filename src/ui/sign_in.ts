// The sign-in page: username and password form, posting to /signin with a CSRF token bound to the pre-session.
import { html } from "./html.ts";
import { layout } from "./layout.ts";
import { MAX_USERNAME_LENGTH } from "../store/users.ts";

export interface SignInView {
  /** Where to go after signing in (a local path, already validated). */
  next: string;
  csrf: string;
  /** Name of the application asking for access, when sign-in started at /oauth/authorize. */
  appName?: string;
  username?: string;
  error?: string;
}

/** Renders the sign-in page; every value is escaped. */
export function renderSignIn(view: SignInView): string {
  const lead = view.appName
    ? html`<p><strong>${view.appName}</strong> wants to access your fieldgate account. Sign in to continue.</p>`
    : html`<p>Sign in to manage the applications you have authorized.</p>`;
  const error = view.error ? html`<p class="error" role="alert" id="signin-error">${view.error}</p>` : "";
  return layout(
    "Sign in",
    html`<h1>Sign in</h1>
${lead}
${error}
<form method="post" action="/signin" class="card">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="next" value="${view.next}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false"
 required maxlength="${MAX_USERNAME_LENGTH}" value="${view.username ?? ""}"${view.error ? html` aria-describedby="signin-error"` : ""}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
<button type="submit" class="primary">Sign in</button>
</form>`,
  );
}
