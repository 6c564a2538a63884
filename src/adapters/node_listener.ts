// node:http <-> app.fetch: builds one standard Request per incoming message and streams the Response back.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { App } from "../app.ts";

/** A node:http request listener that serves `app.fetch`; `origin` is used to build absolute request URLs. */
export function toNodeListener(app: App, origin: string) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let response: Response;
    try {
      response = await app.fetch(toRequest(req, origin), { remoteAddress: req.socket.remoteAddress });
    } catch (error) {
      // app.fetch has its own error boundary; reaching here means the request itself could not be built.
      res.writeHead(400, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: "invalid_request", error_description: "Malformed HTTP request" }));
      void error;
      return;
    }
    await writeResponse(response, res);
  };
}

function toRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(origin + (req.url ?? "/"), {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    // Required by undici for streaming request bodies.
    duplex: hasBody ? "half" : undefined,
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key === "set-cookie") return;
    headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  // Most responses are small JSON: read whole and send with Content-Length in a single write.
  const body = new Uint8Array(await response.arrayBuffer());
  headers["content-length"] = String(body.byteLength);
  res.writeHead(response.status, headers);
  res.end(body);
}
