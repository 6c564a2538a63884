// The HTML error page for browser-facing routes: says what went wrong, never redirects.
import { html } from "./html.ts";
import { layout } from "./layout.ts";

export interface ErrorView {
  status: number;
  title: string;
  message: string;
}

/** Renders a readable error page; message and title are escaped. */
export function renderErrorPage(view: ErrorView): string {
  return layout(
    view.title,
    html`<h1>${view.title}</h1>
<p class="error" role="alert">${view.message}</p>
<p class="muted">Error ${view.status}. If you followed a link from an application, return to it and try again.</p>`,
  );
}
