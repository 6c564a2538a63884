// The demo walkthrough page: token response (tokens masked), GraphQL result, refresh and revoke buttons.
import { html } from "./html.ts";
import { layout } from "./layout.ts";

export interface DemoStep {
  title: string;
  /** HTTP status of the call shown. */
  status: number;
  /** Response body as shown to the evaluator (tokens already masked). */
  body: string;
}

export interface DemoView {
  /** Calls made so far, latest first. */
  steps: DemoStep[];
  hasTokens: boolean;
  refreshCsrf: string;
  revokeCsrf: string;
  error?: string;
}

/** Shows the start and end of a credential so it can be recognised without being usable. */
export function maskToken(token: string): string {
  return token.length <= 12 ? "…" : `${token.slice(0, 10)}…${token.slice(-4)}`;
}

function step(s: DemoStep) {
  return html`<section class="card step">
<h2>${s.title} <span class="status">HTTP ${s.status}</span></h2>
<pre><code>${s.body}</code></pre>
</section>`;
}

/** Renders the demo page; every value is escaped. */
export function renderDemo(view: DemoView): string {
  const error = view.error ? html`<p class="error" role="alert">${view.error}</p>` : "";
  const actions = view.hasTokens
    ? html`<div class="actions">
<form method="post" action="/demo/refresh"><input type="hidden" name="csrf" value="${view.refreshCsrf}">
<button type="submit" class="primary">Refresh the tokens</button></form>
<form method="post" action="/demo/revoke"><input type="hidden" name="csrf" value="${view.revokeCsrf}">
<button type="submit" class="danger">Revoke the tokens</button></form>
</div>`
    : html`<p><a class="button primary" href="/demo/start">Start the demo</a></p>`;
  return layout(
    "Demo walkthrough",
    html`<h1>Demo walkthrough</h1>
<p>This page plays the part of a client application. When you approve access, it receives an authorization code at its
callback, exchanges it at <code>POST /oauth/token</code> with its secret (kept on the server), and calls
<code>POST /graphql</code> with the access token. Tokens are shortened here; the full values never reach this page.</p>
${error}
${actions}
${view.steps.map(step)}
<p><a href="/demo/start">Start over</a> · <a href="/account">Your authorized applications</a></p>`,
  );
}
