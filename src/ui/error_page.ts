// The HTML error page for browser-facing routes: says in plain words what went wrong and what to do, never redirects.
import { html } from "./html.ts";
import { layout } from "./layout.ts";

export interface ErrorLink {
  href: string;
  text: string;
}

export interface ErrorView {
  status: number;
  title: string;
  message: string;
  /** The technical reason, for whoever the user reports it to; shown small under the message. */
  detail?: string;
  /** What the user can do, when returning to the application is the best advice. */
  advice?: string;
  /** Where to go from here; a link to the home page is always added. */
  links?: readonly ErrorLink[];
  /** The response's X-Request-Id, for the user to quote to an administrator. */
  requestId?: string;
}

/** What the page needs of a refusal (an OAuthError, or an HttpError as app.ts maps it): code, status, description, headers. */
export interface Refusal {
  code: string;
  status: number;
  description: string;
  headers: Readonly<Record<string, string>>;
}

const HOME: ErrorLink = { href: "/", text: "Go to the fieldgate home page" };
const ACCOUNT: ErrorLink = { href: "/account", text: "Your account" };
const FROM_APPLICATION = "If you followed a link from an application, return to it and try again.";

/** "about a minute", "about 5 minutes": a Retry-After in seconds as a person would say it. */
export function waitInWords(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 10) return "a few seconds";
  if (seconds <= 90) return "about a minute";
  if (seconds < 3_300) return `about ${Math.round(seconds / 60)} minutes`;
  const hours = Math.round(seconds / 3_600);
  return hours === 1 ? "about an hour" : `about ${hours} hours`;
}

/** The page for a refusal: a title and a plain message per kind of error, the technical description beside it. */
export function errorViewOf(error: Refusal, requestId?: string): ErrorView {
  const base = { status: error.status, requestId };
  const wait = waitInWords(Number(error.headers["retry-after"]));
  switch (error.code) {
    case "not_found":
      return {
        ...base,
        title: "Page not found",
        message: "There is no page at this address. Check the link for a typing mistake, or start again from one of these pages.",
        links: [ACCOUNT],
      };
    case "method_not_allowed":
      return {
        ...base,
        title: "This page cannot be opened this way",
        message: "This address is where a form is sent; it does not work as a link or a bookmark.",
        detail: error.description,
        links: [ACCOUNT],
      };
    case "too_many_requests":
      return { ...base, title: "Too many attempts", message: `Too many failed attempts. Try again in ${wait}.` };
    case "temporarily_unavailable":
      return { ...base, title: "Service busy", message: `fieldgate is busy at the moment. Try again in ${wait}.` };
    case "payload_too_large":
      return {
        ...base,
        title: "Form too large",
        message: "The form sent more than fieldgate accepts. Go back, shorten what you entered, and send it again.",
        detail: error.description,
      };
    default:
      return { ...base, title: "Request refused", message: error.description, advice: FROM_APPLICATION };
  }
}

/** Renders a readable error page; every value is escaped. */
export function renderErrorPage(view: ErrorView): string {
  const links = [HOME, ...(view.links ?? [])].map((l) => html`<li><a href="${l.href}">${l.text}</a></li>`);
  return layout(
    view.title,
    html`<h1>${view.title}</h1>
<p class="error" role="alert">${view.message}</p>
${view.detail ? html`<p class="muted">Details: ${view.detail}</p>` : ""}
${view.advice ? html`<p>${view.advice}</p>` : ""}
<ul class="links">${links}</ul>
<p class="muted">Error ${view.status}${view.requestId ? html`; reference <code>${view.requestId}</code> (quote it if you contact the administrator)` : ""}.</p>`,
  );
}
