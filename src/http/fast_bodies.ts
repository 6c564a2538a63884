// A Response subclass whose body stays a string and whose headers stay a MapHeaders until a standard accessor is
// used. undici (Node) builds a ReadableStream for every Response body and reads it back, and validates every header
// through WebIDL; a server adapter that writes the text itself skips both, which measured 25-40 % of the CPU of a
// total_count request (docs/architecture.md, "Performance devices"). The app hands any caller that did not ask for
// this form a standard Response (standardResponse), so Deno.serve and embedders only ever see plain Fetch objects.
import { MapHeaders } from "./map_headers.ts";

/** What the respond helpers pass: a status and our own header fields. */
export interface TextInit {
  status?: number;
  statusText?: string;
  headers?: Readonly<Record<string, string>>;
}

/** A Response carrying string text that an adapter may write directly, without a body stream. */
class DeferredResponse extends Response {
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

// The body accessors are defined on the prototype because the DOM types declare `body` as a property; each reads the
// real Response, so the text is consumed exactly as a standard body would be.
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
// Once the real Response exists its Headers answer, so a reader of the body and of the headers see one object.
Object.defineProperty(DeferredResponse.prototype, "headers", {
  get(this: DeferredResponse) {
    return this.real ? this.real.headers : this.fields;
  },
});

/** A text response in the deferred form; the app's boundary turns it standard for callers that did not opt in. */
export function textResponse(text: string, init: TextInit): Response {
  return new DeferredResponse(text, init);
}

/** The text of a deferred response nobody has read yet; undefined for any other response. */
export function deferredText(response: Response): string | undefined {
  return response instanceof DeferredResponse && response.real === undefined ? response.text0 : undefined;
}

/** `response` as a plain Response: a deferred one is rebuilt as the standard Response it stands for. */
export function standardResponse(response: Response): Response {
  return response instanceof DeferredResponse ? realResponse(response) : response;
}
