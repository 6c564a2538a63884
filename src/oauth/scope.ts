// Scope strings (RFC 6749 §3.3): parsing, subset checks and narrowing against what was granted or registered.
import { invalidScope } from "./errors.ts";

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Splits a space-delimited scope string into distinct tokens, in their first order.
 * @throws OAuthError invalid_scope for a token outside the RFC 6749 §3.3 character set
 */
export function parseScope(scope: string): string[] {
  const tokens = scope.split(" ").filter((token) => token !== "");
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token)) throw invalidScope("Scope contains characters RFC 6749 does not allow");
  }
  return [...new Set(tokens)];
}

/** Joins scope tokens into the space-separated wire form. */
export function formatScope(tokens: readonly string[]): string {
  return tokens.join(" ");
}

/**
 * The scope a request ends up with: `allowed` when nothing was requested, else the requested subset of it.
 * Requests may only narrow, never widen (RFC 6749 §6 for refresh, §3.3 for client credentials).
 * @throws OAuthError invalid_scope when the request is empty, malformed or asks for more than `allowed`
 */
export function narrowScope(requested: string | undefined, allowed: string): string {
  if (requested === undefined) return allowed;
  const tokens = parseScope(requested);
  if (tokens.length === 0) throw invalidScope("Scope must name at least one scope");
  const granted = new Set(parseScope(allowed));
  if (tokens.some((token) => !granted.has(token))) {
    throw invalidScope("Requested scope exceeds the scope granted to this client");
  }
  return formatScope(tokens);
}
