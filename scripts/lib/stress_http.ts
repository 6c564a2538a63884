// HTTP for `npm run stress`: one timed request from a chosen loopback address, a cookie jar, abortable pauses.
import { Agent, request } from "node:http";
import { createServer } from "node:net";

/** One answer, or the transport failure in `error` (then `status` is 0); `ms` runs until the last body byte. */
export interface Answer {
  status: number;
  body: string;
  setCookies: string[];
  ms: number;
  error?: string;
}

export interface SendOptions {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** A keep-alive agent, so a loop reuses its connections like a browser or an API client does. */
  agent?: Agent;
  /** The source address: any of 127.0.0.0/8 reaches a server listening on 127.0.0.1. */
  localAddress?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Sends one request and resolves with its answer or its failure; it never rejects. */
export function send(url: string, options: SendOptions): Promise<Answer> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  return new Promise((resolve) => {
    const fail = (error: string) => resolve({ status: 0, body: "", setCookies: [], ms: elapsed(), error });
    if (options.signal?.aborted) return fail("aborted");
    const req = request(url, {
      method: options.method ?? "GET",
      headers: options.headers,
      agent: options.agent,
      localAddress: options.localAddress,
      signal: options.signal,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({
        status: res.statusCode ?? 0,
        body: Buffer.concat(chunks).toString("utf8"),
        setCookies: res.headers["set-cookie"] ?? [],
        ms: elapsed(),
      }));
      res.on("error", (error) => fail(errorName(error)));
    });
    req.setTimeout(options.timeoutMs, () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", (error) => fail(errorName(error)));
    req.end(options.body);
  });
}

function errorName(error: Error & { code?: string }): string {
  if (error.name === "AbortError") return "aborted";
  return error.code === "TIMEOUT" ? "timeout" : error.code ?? error.name;
}

/** A keep-alive agent with at most `sockets` connections. */
export function keepAlive(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets });
}

/** Cookies by name, as a browser keeps them for one site. */
export type Jar = Map<string, string>;

/** Applies Set-Cookie headers: an empty value or Max-Age=0 deletes the cookie. */
export function remember(jar: Jar, setCookies: readonly string[]): void {
  for (const header of setCookies) {
    const [pair = ""] = header.split(";");
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (value === "" || /max-age=0/i.test(header)) jar.delete(name);
    else jar.set(name, value);
  }
}

/** The Cookie header for the jar (empty headers when it holds nothing). */
export function cookieHeaders(jar: Jar): Record<string, string> {
  return jar.size === 0 ? {} : { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
}

/** Waits `ms`, or less when `signal` aborts first; never rejects. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** True when this machine lets a socket bind `address` (Linux routes all of 127.0.0.0/8 to loopback; macOS does not). */
export function canBind(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(0, address, () => server.close(() => resolve(true)));
  });
}
