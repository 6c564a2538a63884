// Request bodies: size-limited reading, and OAuth parameters from JSON or form bodies as a string record.
import { OAuthError, invalidRequest } from "../oauth/errors.ts";
import { ParsedRequest } from "./parsed_request.ts";

/** The media type of a request without parameters, lowercased ("" when absent). */
export function mediaType(request: Request): string {
  const header = request.headers.get("content-type") ?? "";
  return header.split(";", 1)[0]!.trim().toLowerCase();
}

function tooLarge(maxBytes: number): OAuthError {
  return new OAuthError("payload_too_large", `Request body is larger than ${maxBytes} bytes`, {
    status: 413,
  });
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads the body as UTF-8 text, refusing more than `maxBytes` without buffering it whole: a declared
 * Content-Length over the limit is refused before reading, a streamed body as soon as it crosses the limit.
 * @throws OAuthError payload_too_large (413) or invalid_request (bad UTF-8)
 */
export async function readText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (request instanceof ParsedRequest) return decode(request.takeBytes(), maxBytes);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return decode(chunks.length === 1 ? chunks[0]! : concat(chunks, total), maxBytes);
}

function decode(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw invalidRequest("Request body is not valid UTF-8", { cause: error });
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Parameters keyed by name; a null prototype so names like "__proto__" are plain keys. */
export type Params = Record<string, string>;

function emptyParams(): Params {
  return Object.create(null) as Params;
}

/** Which parameters the endpoint understands; `recognized` switches on RFC 6749 §3.2 leniency for the rest. */
export interface ReadParamsOptions {
  recognized?: readonly string[];
}

/**
 * Reads OAuth parameters from a JSON object (the service spec's format) or an
 * application/x-www-form-urlencoded body (RFC 6749). Empty values count as omitted (RFC 6749 §3.1).
 * With `recognized`, only those names are read: RFC 6749 §3.2 says unrecognised parameters MUST be ignored, so
 * only a recognized one that repeats or is not a string is invalid_request, and the others are dropped. Without
 * it (our own HTML forms) every repeated or non-string parameter is refused.
 * @throws OAuthError invalid_request (400, or 415 for an unsupported Content-Type), payload_too_large
 */
export async function readParams(request: Request, maxBytes: number, options: ReadParamsOptions = {}): Promise<Params> {
  const type = mediaType(request);
  if (type !== "application/json" && type !== "application/x-www-form-urlencoded") {
    throw invalidRequest("Content-Type must be application/json or application/x-www-form-urlencoded", {
      status: 415,
    });
  }
  const text = await readText(request, maxBytes);
  const wanted = options.recognized ? (name: string) => options.recognized!.includes(name) : () => true;
  return type === "application/json" ? jsonParams(text, wanted) : formParams(text, wanted);
}

function jsonParams(text: string, wanted: (name: string) => boolean): Params {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidRequest("Request body is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalidRequest("Request body must be a JSON object");
  }
  const params = emptyParams();
  for (const [name, value] of Object.entries(parsed)) {
    if (!wanted(name) || value === null || value === "") continue;
    if (typeof value !== "string") throw invalidRequest(`Parameter ${safeName(name)} must be a string`);
    params[name] = value;
  }
  return params;
}

function formParams(text: string, wanted: (name: string) => boolean): Params {
  const params = emptyParams();
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (!wanted(name)) continue;
    if (seen.has(name)) throw invalidRequest(`Parameter ${safeName(name)} is repeated`);
    seen.add(name);
    if (value !== "") params[name] = value;
  }
  return params;
}

/** A parameter name fit to quote in an error description: short, printable, never a value. */
function safeName(name: string): string {
  return /^[A-Za-z0-9_.-]{1,40}$/.test(name) ? name : "(unnamed)";
}
