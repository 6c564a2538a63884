// OAuthError: the one error type domain code throws; each surface renders it in one place.

/** Error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, RFC 7009 §2.2.1 and RFC 9449 §12.2, plus 429. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "access_denied"
  | "invalid_token"
  | "insufficient_scope"
  | "unsupported_token_type"
  | "temporarily_unavailable"
  | "server_error"
  | "too_many_requests"
  | "invalid_dpop_proof"
  | "use_dpop_nonce";

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  invalid_token: 401,
  insufficient_scope: 403,
  unsupported_token_type: 400,
  temporarily_unavailable: 503,
  server_error: 500,
  too_many_requests: 429,
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
};

export interface OAuthErrorOptions {
  /** Overrides the status implied by the code (e.g. 403 unauthorized_client at revocation). */
  status?: number;
  /** Extra response headers such as Allow, Retry-After or WWW-Authenticate. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A protocol error with an RFC error code, an HTTP status and a description safe to show the client. */
export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;
  readonly description: string;
  readonly headers: Record<string, string>;

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(description, { cause: options.cause });
    this.name = "OAuthError";
    this.code = code;
    this.status = options.status ?? STATUS[code];
    this.description = description;
    this.headers = options.headers ?? {};
  }
}

/** True for errors this module created. */
export function isOAuthError(error: unknown): error is OAuthError {
  return error instanceof OAuthError;
}

export const invalidRequest = (msg: string, o?: OAuthErrorOptions) => new OAuthError("invalid_request", msg, o);
export const invalidClient = (msg: string, o?: OAuthErrorOptions) => new OAuthError("invalid_client", msg, o);
export const invalidGrant = (msg: string, o?: OAuthErrorOptions) => new OAuthError("invalid_grant", msg, o);
export const unauthorizedClient = (msg: string, o?: OAuthErrorOptions) => new OAuthError("unauthorized_client", msg, o);
export const unsupportedGrantType = (msg: string) => new OAuthError("unsupported_grant_type", msg);
export const invalidScope = (msg: string) => new OAuthError("invalid_scope", msg);
export const invalidToken = (msg: string, o?: OAuthErrorOptions) => new OAuthError("invalid_token", msg, o);
export const insufficientScope = (msg: string, o?: OAuthErrorOptions) => new OAuthError("insufficient_scope", msg, o);
/** The database stayed locked by another writer: RFC 6749's temporarily_unavailable, with a hint to retry. */
export const temporarilyUnavailable = (retryAfterSeconds = 1) =>
  new OAuthError("temporarily_unavailable", "The service is busy; try again shortly", {
    headers: { "retry-after": String(retryAfterSeconds) },
  });
export const tooManyRequests = (retryAfterSeconds: number) =>
  new OAuthError("too_many_requests", "Too many failed attempts, try again later", {
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
/** A DPoP proof that is missing, malformed, replayed or not for this request (RFC 9449 §4.3); 401 at a resource. */
export const invalidDpopProof = (msg: string, o?: OAuthErrorOptions) => new OAuthError("invalid_dpop_proof", msg, o);
