// Request bodies: size-limited reading, and OAuth parameters from JSON or form bodies as a string record.
import { HttpError, badRequest } from "./errors.ts";

/** The media type of a request without parameters, lowercased ("" when absent). */
export function mediaType(request: Request): string {
  const header = request.headers.get("content-type") ?? "";
  return header.split(";", 1)[0]!.trim().toLowerCase();
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError("payload_too_large", `Request body is larger than ${maxBytes} bytes`);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * How long a streamed body may take to arrive whole. Deno.serve has no request timeout of its own, so without
 * this a client trickling its body would hold the connection (and a file descriptor) for ever; on Node the
 * adapter hands over bodies already read, under node:http's request timeout.
 */
export const BODY_DEADLINE_MS = 30_000;

/**
 * Reads the body as UTF-8 text, refusing more than `maxBytes` without buffering it whole: a declared
 * Content-Length over the limit is refused before reading, a streamed body as soon as it crosses the limit.
 * @throws HttpError payload_too_large (413), request_timeout (408, past `deadlineMs`) or bad_request (bad UTF-8,
 * a body cut short)
 */
export async function readText(request: Request, maxBytes: number, deadlineMs = BODY_DEADLINE_MS): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  // Read or locked already (an embedder's middleware parsed it first): the request cannot be answered as sent.
  // bodyUsed is asked first: an adapter's request may build its body stream only when `body` is read.
  if (request.bodyUsed) throw alreadyRead();
  if (declared === null || Number(declared) === 0) {
    if (!request.body) return "";
    if (request.body.locked) throw alreadyRead();
  }
  // HTTP framing holds a body with a declared length to that length, so it may be read whole; a body buffered by
  // the adapter then arrives without a stream or a timer.
  const bytes = declared !== null ? await readDeclared(request, deadlineMs) : await readStreamed(request, maxBytes, deadlineMs);
  if (bytes === "late") throw new HttpError("request_timeout", `The request body did not arrive within ${deadlineMs / 1000} s`);
  return decode(bytes, maxBytes);
}

/** A promise that resolves "late" after `ms` unless cleared first. */
function startDeadline(ms: number): { late: Promise<"late">; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  return { late, clear: () => clearTimeout(timer) };
}

function alreadyRead(): HttpError {
  return badRequest("The request body was already read before it reached fieldgate");
}

async function readDeclared(request: Request, deadlineMs: number): Promise<Uint8Array | "late"> {
  const reading = request.arrayBuffer();
  try {
    // A read that has already settled (the adapter buffered the body) reports within one microtask turn and is
    // taken without a timer or a race, which took readText of a buffered body from 4.0 to 1.5 µs (interleaved
    // microbenchmark). The rejection handler also observes a read that fails after the deadline below has won.
    let ready: ArrayBuffer | undefined;
    reading.then((buffer) => (ready = buffer), () => {});
    await undefined;
    if (ready !== undefined) return new Uint8Array(ready);
    const deadline = startDeadline(deadlineMs);
    try {
      const result = await Promise.race([reading, deadline.late]);
      return result === "late" ? result : new Uint8Array(result);
    } finally {
      deadline.clear();
    }
  } catch (error) {
    if (request.body?.locked) throw alreadyRead();
    // The client went away mid-body (Deno: "Cannot read request body"): its request, not the server, failed.
    throw badRequest("The request body could not be read to its end", { cause: error });
  }
}

async function readStreamed(request: Request, maxBytes: number, deadlineMs: number): Promise<Uint8Array | "late"> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const deadline = startDeadline(deadlineMs);
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array> | "late";
      try {
        chunk = await Promise.race([reader.read(), deadline.late]);
      } catch (error) {
        throw badRequest("The request body could not be read to its end", { cause: error });
      }
      if (chunk === "late") {
        await reader.cancel().catch(() => {});
        return chunk;
      }
      const { done, value } = chunk;
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    deadline.clear();
  }
  return chunks.length === 1 ? chunks[0]! : concat(chunks, total);
}

function decode(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw badRequest("Request body is not valid UTF-8", { cause: error });
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
 * @throws HttpError bad_request (400), unsupported_media_type (415), payload_too_large (413), request_timeout (408)
 */
export async function readParams(request: Request, maxBytes: number, options: ReadParamsOptions = {}): Promise<Params> {
  const type = mediaType(request);
  if (type !== "application/json" && type !== "application/x-www-form-urlencoded") {
    throw new HttpError("unsupported_media_type", "Content-Type must be application/json or application/x-www-form-urlencoded");
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
    throw badRequest("Request body is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("Request body must be a JSON object");
  }
  // JSON.parse keeps the last of repeated names; RFC 6749 §3.1 forbids repeats, and a proxy that reads the first
  // would see a different request than we do, so a repeated recognized name is refused as in a form body.
  const seen = new Set<string>();
  for (const name of memberNames(text)) {
    if (!wanted(name)) continue;
    if (seen.has(name)) throw badRequest(`Parameter ${safeName(name)} is repeated`);
    seen.add(name);
  }
  const params = emptyParams();
  for (const [name, value] of Object.entries(parsed)) {
    if (!wanted(name) || value === null || value === "") continue;
    if (typeof value !== "string") throw badRequest(`Parameter ${safeName(name)} must be a string`);
    params[name] = value;
  }
  return params;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * The member names of the top-level object in `text`, in order and with repeats, which JSON.parse does not
 * report. `text` must already have parsed as a JSON object: the scan only tracks strings and nesting depth.
 */
export function memberNames(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true;
          i++;
        }
      }
      if (depth === 1 && nameNext) {
        // Escapes decoded, so "client\u005fid" is the same name as "client_id".
        names.push(escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i));
        nameNext = false;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      nameNext = depth === 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COMMA && depth === 1) {
      nameNext = true;
    }
  }
  return names;
}

function formParams(text: string, wanted: (name: string) => boolean): Params {
  const params = emptyParams();
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (!wanted(name)) continue;
    if (seen.has(name)) throw badRequest(`Parameter ${safeName(name)} is repeated`);
    seen.add(name);
    if (value !== "") params[name] = value;
  }
  return params;
}

/** A parameter name fit to quote in an error description: short, printable, never a value. */
function safeName(name: string): string {
  return /^[A-Za-z0-9_.-]{1,40}$/.test(name) ? name : "(unnamed)";
}
