// node:http <-> app.fetch: builds one standard Request per incoming message and writes the Response back.
// Lean on purpose (this is the hot path of every request): the body is buffered as bytes instead of being wrapped
// in a web stream, headers are copied once, and the response is written with a single end() call.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app.ts";
import { deferredText } from "./light_response.ts";
import { ParsedRequest } from "./parsed_request.ts";
import { createWriteQueue } from "./node_write_queue.ts";
import { drainRequest, LINGER_LIMITS, type LingerLimits } from "./node_linger.ts";

/** Used only when handed an app-like object without config (test doubles). */
const DEFAULT_MAX_BODY_BYTES = 1_048_576;

/** Options of toNodeListener; `linger` bounds the draining of a refused upload (node_linger.ts). */
export interface NodeListenerOptions {
  linger?: LingerLimits;
  /** True once the server is shutting down: every response written from then on closes its connection. */
  closing?: () => boolean;
}

/** A node:http request listener that serves `app.fetch`; `origin` is used to build absolute request URLs. */
export function toNodeListener(app: App, origin: string, options: NodeListenerOptions = {}) {
  const linger = options.linger ?? LINGER_LIMITS;
  const closing = options.closing;
  // Bodies are buffered here, so the adapter enforces the same cap the app does: past it, it stops reading and
  // hands over maxBodyBytes + 1 bytes, which the app refuses with 413 exactly as it would a streamed body.
  const maxBodyBytes = maxBodyBytesOf(app);
  // This listener's own queue: its answers of one event-loop turn leave together (node_write_queue.ts).
  const writes = createWriteQueue();
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let response: Response;
    let body: Uint8Array | undefined;
    // Read now: once node:http destroys the socket (bytes after the request it cannot parse), the address is gone,
    // and a request from "unknown" would escape the per-address throttle and the audit trail.
    const remoteAddress = req.socket.remoteAddress;
    // A declared length over the cap is refused before a byte of the body is read: the app sees the header and
    // answers 413 without reading, and the upload is drained only after the answer has gone out.
    const declaredTooLarge = declaresMoreThan(req, maxBodyBytes);
    try {
      body = !hasBody(req) ? undefined : declaredTooLarge ? NO_BYTES : await readBody(req, maxBodyBytes);
      // Nobody can receive the answer any more: issuing, checking a password or writing an audit row would be work
      // (and state) for no one.
      if (req.socket.destroyed) return;
      response = await app.fetch(toRequest(req, origin, body), { remoteAddress });
    } catch (error) {
      // app.fetch has its own error boundary; reaching here means the request itself could not be built or read.
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(400, { "content-type": "application/json; charset=utf-8", connection: "close" });
        res.end(JSON.stringify({ error: "invalid_request", error_description: "Malformed HTTP request" }));
      }
      void error;
      return;
    }
    // An oversized upload was left unread: the connection closes after answering, once the rest is drained.
    const unread = declaredTooLarge || (body !== undefined && body.byteLength > maxBodyBytes);
    const { status, headers, body: payload, bytes } = await responseParts(response, unread);
    writes.write(() => {
      if (closing?.()) res.shouldKeepAlive = false;
      res.writeHead(status, headers);
      if (!unread) return void res.end(payload);
      // The answer leaves now, complete by its Content-Length; node:http closes the socket at end(), so that waits
      // until the upload has been drained (node_linger.ts says why).
      if (payload !== undefined) res.write(payload);
      void drainRequest(req, linger).then(() => res.end());
    }, (error) => res.destroy(error instanceof Error ? error : undefined), bytes);
  };
}

const NO_BYTES = new Uint8Array(0);

/** The app's body cap (config.maxBodyBytes), which the adapter enforces as the app does. */
export function maxBodyBytesOf(app: App): number {
  return app.deps?.config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
}

/** True when the request's Content-Length is over `maxBytes` (an upload the app will refuse with 413). */
export function declaresMoreThan(req: IncomingMessage, maxBytes: number): boolean {
  const declared = req.headers["content-length"];
  return declared !== undefined && Number(declared) > maxBytes;
}

function hasBody(req: IncomingMessage): boolean {
  const method = req.method;
  if (method === "GET" || method === "HEAD") return false;
  // No Content-Length and no Transfer-Encoding means no body (RFC 9112 §6.3).
  return req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
}

/** The whole body, or its first `maxBytes + 1` bytes when it is larger (the rest is not read into memory). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", done);
      req.off("error", reject);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, Math.min(total, maxBytes + 1)));
    };
    const onData = (chunk: Buffer) => {
      const room = maxBytes + 1 - total;
      chunks.push(chunk.byteLength > room ? chunk.subarray(0, room) : chunk);
      total += Math.min(chunk.byteLength, room);
      if (total > maxBytes) {
        // Enough to know it is too large; stop buffering and drop the rest of the upload.
        req.pause();
        done();
      }
    };
    req.on("data", onData);
    req.once("end", done);
    req.once("error", reject);
  });
}

/**
 * llhttp has validated the method, target and every header, and the body is already in memory: hand them over as
 * they are (see parsed_request.ts). The URL is our own origin plus the target's path and query: an absolute-form
 * target ("GET http://host/path", which RFC 9112 §3.2.2 says a server must accept) contributes only its path and
 * query, never its host. Any other target ("*") cannot be routed and is refused as a malformed request.
 */
function toRequest(req: IncomingMessage, origin: string, body: Uint8Array | undefined): Request {
  // A Request in all but name (parsed_request.ts says why it does not declare it).
  return new ParsedRequest(req.method ?? "GET", origin + pathAndQuery(req.url ?? "/"), req.rawHeaders, body) as unknown as Request;
}

function pathAndQuery(target: string): string {
  if (target.startsWith("/")) return target;
  const absolute = /^https?:\/\//i.test(target) ? URL.parse(target) : null;
  if (!absolute) throw new TypeError("request target is neither a path nor an absolute URL");
  return absolute.pathname + absolute.search;
}

/** Status, header lines and body of a Response, ready for one writeHead and one end. */
interface ResponseParts {
  status: number;
  headers: string[];
  body: string | Uint8Array | undefined;
  bytes: number;
}

async function responseParts(response: Response, close: boolean): Promise<ResponseParts> {
  const headers: string[] = close ? ["connection", "close"] : [];
  let cookies: string[] | undefined;
  response.headers.forEach((value, key) => {
    // forEach joins repeated Set-Cookie values with ", ", which breaks cookies; they are sent one per line.
    if (key === "set-cookie") cookies ??= response.headers.getSetCookie();
    else headers.push(key, value);
  });
  for (const cookie of cookies ?? []) headers.push("set-cookie", cookie);
  const text = deferredText(response);
  if (text !== undefined) {
    // A light response (the app serve_node.ts builds makes its JSON answers so): headers and the string body leave
    // in one write; no stream to read back.
    const bytes = Buffer.byteLength(text);
    headers.push("content-length", String(bytes));
    return { status: response.status, headers, body: text, bytes };
  }
  if (!response.body) return { status: response.status, headers, body: undefined, bytes: 0 };
  // Responses are small JSON or HTML: read whole and send with Content-Length in a single write.
  const body = new Uint8Array(await response.arrayBuffer());
  headers.push("content-length", String(body.byteLength));
  return { status: response.status, headers, body, bytes: body.byteLength };
}
