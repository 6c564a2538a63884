// The one rendering of a refusal per surface: RFC 6749 JSON for APIs, the error page for browser routes.
import type { Responders } from "../deps.ts";
import type { HttpError, HttpErrorCode } from "../http/errors.ts";
import type { Surface } from "../http/router.ts";
import { html } from "../http/respond.ts";
import { errorViewOf, renderErrorPage, type Refusal } from "../ui/error_page.ts";

// Answered with RFC 6749's invalid_request (the status stays 400, 415 or 406), so OAuth clients parse them as any other.
const INVALID_REQUEST: ReadonlySet<HttpErrorCode> = new Set(["bad_request", "unsupported_media_type", "not_acceptable"]);

/**
 * A transport refusal as the client reads it: a malformed request, an unsupported body type or an unacceptable
 * response type carries the wire code invalid_request; the others keep their own.
 */
export function refusalOf(error: HttpError): Refusal {
  const code = INVALID_REQUEST.has(error.code) ? "invalid_request" : error.code;
  return { code, status: error.status, description: error.description, headers: error.headers };
}

/** Where an answer goes: the route's surface, the request's id (which the error page shows), the app's responders. */
export interface RenderTarget {
  surface: Surface;
  requestId: string;
  respond: Responders;
}

/** A refusal (an OAuthError, or a mapped HttpError) in the shape its surface expects. */
export function renderError(error: Refusal, { surface, requestId, respond }: RenderTarget): Response {
  if (surface === "html") return html(renderErrorPage(errorViewOf(error, requestId)), error.status, error.headers);
  return respond.jsonNoStore({ error: error.code, error_description: error.description }, error.status, error.headers);
}

/** A bare 500 server_error that reveals nothing about its cause. */
export function renderServerError({ surface, requestId, respond }: RenderTarget): Response {
  if (surface === "html") {
    const page = renderErrorPage({ status: 500, title: "Something went wrong", message: "The server could not complete the request.", requestId });
    return html(page, 500);
  }
  return respond.jsonNoStore({ error: "server_error", error_description: "The server could not complete the request" }, 500);
}
