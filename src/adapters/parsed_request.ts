// A Request made from what the Node adapter already parsed: method, URL text, raw header pairs, body bytes.
// Saves building undici's Request for every request: ~4 µs of header validation and copying (about 7 % of a GraphQL
// request in the server's perf profile; total_count main-thread CPU 149–153 -> 109–119 µs with the body bytes
// handed over unstreamed, measured interleaved), although llhttp has already validated every header and the app
// reads only a few. Headers live in a MapHeaders, the body is a one-chunk stream over the buffered bytes, and the
// standard Request is built only when some other member is used, so every reader still works.
import { MapHeaders } from "./map_headers.ts";

/** Header pairs as the HTTP parser delivered them: [name, value, name, value, ...] (Node's rawHeaders shape). */
export type RawHeaders = readonly string[];

/**
 * The Request an adapter hands to app.fetch. `method` and `url` must already be valid (the adapter's HTTP parser
 * checked them; the URL is the adapter's origin plus the request target). The body bytes are read once, through
 * `body` or any standard accessor. It has every member of the DOM lib's Request (a test holds it
 * to that); it does not say `implements Request` because Deno's lib adds members of its own, and an embedder's
 * `deno check` would then fail on this file although only the Node adapter ever builds one.
 */
export class ParsedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly #bytes: Uint8Array | undefined;
  #real: Request | undefined;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  #taken = false;

  constructor(method: string, url: string, rawHeaders: RawHeaders, bytes?: Uint8Array) {
    this.method = method;
    this.url = url;
    this.headers = MapHeaders.fromRaw(rawHeaders);
    this.#bytes = bytes;
  }

  /** This request as a standard Request (built once, carrying the body unless `body` was already read). */
  #request(): Request {
    if (this.#real) return this.#real;
    // Once the stream was read the body is gone; bodyUsed and the readers below keep reporting it as read.
    const body = this.#taken || this.#bytes === undefined ? null : this.#stream ?? (this.#bytes as Uint8Array<ArrayBuffer>);
    return (this.#real = new Request(this.url, { method: this.method, headers: [...this.headers], body, duplex: "half" } as RequestInit));
  }

  get bodyUsed(): boolean {
    return this.#real ? this.#real.bodyUsed || this.#taken : this.#taken;
  }
  /** The buffered bytes as one chunk: no undici Request, no copy; the first read marks the body used. */
  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (this.#real || this.#bytes === undefined) return this.#real?.body ?? null;
    const bytes = this.#bytes as Uint8Array<ArrayBuffer>;
    return (this.#stream ??= new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull: (controller) => {
        this.#taken = true;
        controller.enqueue(bytes);
        controller.close();
      },
    }, { highWaterMark: 0 }));
  }
  text(): Promise<string> {
    return this.#read((request) => request.text());
  }
  json(): Promise<unknown> {
    return this.#read((request) => request.json());
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    // The buffered bytes themselves while nobody has read the body: no stream read, no undici Request.
    if (!this.#real && !this.#taken && !this.#stream?.locked && this.#bytes !== undefined) {
      this.#taken = true;
      void this.#stream?.cancel();
      const bytes = this.#bytes;
      const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      return Promise.resolve((whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer);
    }
    return this.#read((request) => request.arrayBuffer());
  }
  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#read((request) => request.bytes());
  }
  blob(): Promise<Blob> {
    return this.#read((request) => request.blob());
  }
  formData(): Promise<FormData> {
    return this.#read((request) => request.formData());
  }
  clone(): Request {
    if (this.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
    return this.#request().clone();
  }

  /** A body read through the standard request; after the stream was read it rejects, as reading a used body does. */
  #read<T>(reader: (request: Request) => Promise<T>): Promise<T> {
    if (this.#taken) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
    return reader(this.#request());
  }

  get cache(): RequestCache {
    return this.#request().cache;
  }
  get credentials(): RequestCredentials {
    return this.#request().credentials;
  }
  get destination(): RequestDestination {
    return this.#request().destination;
  }
  get integrity(): string {
    return this.#request().integrity;
  }
  get keepalive(): boolean {
    return this.#request().keepalive;
  }
  get mode(): RequestMode {
    return this.#request().mode;
  }
  get redirect(): RequestRedirect {
    return this.#request().redirect;
  }
  get referrer(): string {
    return this.#request().referrer;
  }
  get referrerPolicy(): ReferrerPolicy {
    return this.#request().referrerPolicy;
  }
  get signal(): AbortSignal {
    return this.#request().signal;
  }
  get [Symbol.toStringTag](): string {
    return "Request";
  }
}
