// A Response subclass whose body is a plain string until someone asks for a stream, and whose headers are a
// MapHeaders. Building a Response with a body makes undici (Node) allocate a ReadableStream and read it back, about
// 15–25 µs per request, and its Headers cost ~2.3 µs more than a Map for the few constant fields we send
// (bench/micro measurements in the commits); a server adapter that writes the text itself skips both (requests:
// see parsed_request.ts). Every standard accessor still works: the real Response is built on demand.
import { MapHeaders } from "./map_headers.ts";

// Process-wide on purpose, the one switch of its kind: the respond helpers run deep inside handlers that have no
// app options at hand, and the only consumer that cannot take a DeferredResponse (Deno.serve) never shares a
// process with the Node listener that turns this on. Any other code in that process (an embedder's app.fetch
// caller, a test) still gets a Response whose every standard member works.
let deferred = false;

/**
 * Lets respond helpers build DeferredResponse objects. Off by default: only an adapter that writes
 * `deferredText()` itself may turn it on (Deno.serve reads a Response's internal body, which a deferred one lacks).
 */
export function deferResponseBodies(on = true): void {
  deferred = on;
}

/** What the respond helpers pass: a status and our own header fields. */
export interface TextInit {
  status?: number;
  statusText?: string;
  headers?: Readonly<Record<string, string>>;
}

/** A Response carrying string text that the Node adapter writes directly, without a body stream. */
export class DeferredResponse extends Response {
  readonly text0: string;
  readonly fields: MapHeaders;
  real: Response | undefined;
  constructor(text: string, init: TextInit) {
    // Status only: the header fields live in a MapHeaders (below), not in undici's Headers.
    super(null, { status: init.status, statusText: init.statusText });
    this.fields = MapHeaders.fromRecord(init.headers);
    this.text0 = text;
  }
  override clone(): Response {
    return realResponse(this).clone();
  }
}

/** The standard Response with the same status, headers and text, built on first use of a standard accessor. */
function realResponse(self: DeferredResponse): Response {
  return (self.real ??= new Response(self.text0, { status: self.status, statusText: self.statusText, headers: [...self.fields] }));
}

// The body accessors are defined on the prototype because TypeScript (and the DOM types) declare `body` as a
// property; each reads the real Response, so the text is consumed exactly as a standard body would be.
Object.defineProperties(DeferredResponse.prototype, {
  body: { get(this: DeferredResponse) { return realResponse(this).body; } },
  bodyUsed: { get(this: DeferredResponse) { return this.real?.bodyUsed ?? false; } },
});
for (const name of ["text", "json", "arrayBuffer", "bytes", "blob", "formData"] as const) {
  Object.defineProperty(DeferredResponse.prototype, name, {
    value(this: DeferredResponse) {
      return (realResponse(this) as unknown as Record<string, () => Promise<unknown>>)[name]!();
    },
  });
}
// `headers` is declared as a property by the DOM types, so the accessor is defined on the prototype as well. Once
// the real Response exists its Headers answer, so a reader of the body and of the headers see one object.
Object.defineProperty(DeferredResponse.prototype, "headers", {
  get(this: DeferredResponse) {
    return this.real ? this.real.headers : this.fields;
  },
});

/** A text response: deferred when the adapter asked for it, a standard Response otherwise. */
export function textResponse(text: string, init: TextInit): Response {
  return deferred ? new DeferredResponse(text, init) : new Response(text, init);
}

/** The text of a deferred response nobody has read yet; undefined for any other response. */
export function deferredText(response: Response): string | undefined {
  return response instanceof DeferredResponse && response.real === undefined ? response.text0 : undefined;
}
