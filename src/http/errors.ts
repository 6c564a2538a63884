// HttpError: a request refused as HTTP (no such path, wrong method, a body too large, late or unreadable, a media
// type the resource does not take or cannot answer in) before any protocol looked at it. app.ts renders it beside OAuthError, with the same wire shape.

/** Why the transport refused a request. */
export type HttpErrorCode =
  | "not_found"
  | "method_not_allowed"
  /** A body or header that is not what it claims to be: bad JSON or UTF-8, a repeated parameter, a malformed header. */
  | "bad_request"
  | "unsupported_media_type"
  /** The client accepts none of the media types the resource can answer in. */
  | "not_acceptable"
  | "payload_too_large"
  | "request_timeout";

const STATUS: Record<HttpErrorCode, number> = {
  not_found: 404,
  method_not_allowed: 405,
  bad_request: 400,
  unsupported_media_type: 415,
  not_acceptable: 406,
  payload_too_large: 413,
  request_timeout: 408,
};

export interface HttpErrorOptions {
  /** Extra response headers such as Allow or WWW-Authenticate. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A transport refusal with a status and a description safe to show the client. */
export class HttpError extends Error {
  readonly code: HttpErrorCode;
  readonly status: number;
  readonly description: string;
  readonly headers: Record<string, string>;

  constructor(code: HttpErrorCode, description: string, options: HttpErrorOptions = {}) {
    super(description, { cause: options.cause });
    this.name = "HttpError";
    this.code = code;
    this.status = STATUS[code];
    this.description = description;
    this.headers = options.headers ?? {};
  }
}

/** True for errors this module created. */
export function isHttpError(error: unknown): error is HttpError {
  return error instanceof HttpError;
}

export const badRequest = (msg: string, o?: HttpErrorOptions) => new HttpError("bad_request", msg, o);
