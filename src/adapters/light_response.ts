// The Node adapter's TextResponse: a Response whose body stays a string and whose headers stay a MapHeaders until a
// standard accessor is used. undici builds a ReadableStream for every Response body and reads it back, and validates
// every header through WebIDL; the Node listener writes the text itself (node_listener.ts) and skips both, which
// measured about 30 % of /healthz's CPU per request (140–153 → 99–103 µs, interleaved `npm run bench` servers).
// Injected as AppOptions.textResponse by serve_node.ts only; no other caller of app.fetch ever sees one.
import type { TextInit, TextResponse } from "../deps.ts";
import { MapHeaders } from "./map_headers.ts";

/** A Response carrying string text that the Node listener writes directly, without a body stream. */
class LightResponse extends Response {
  readonly text0: string;
  readonly fields: MapHeaders;
  real: Response | undefined;
  constructor(text: string, init: TextInit) {
    // Status only: the header fields live in a MapHeaders (below), not in undici's Headers.
    super(null, { status: init.status });
    this.fields = MapHeaders.fromRecord(init.headers);
    this.text0 = text;
  }
  override clone(): Response {
    return realResponse(this).clone();
  }
}

/** The standard Response with the same status, headers and text, built on first use of a standard accessor. */
function realResponse(self: LightResponse): Response {
  return (self.real ??= new Response(self.text0, { status: self.status, statusText: self.statusText, headers: [...self.fields] }));
}

// The body accessors are defined on the prototype because the DOM types declare `body` as a property; each reads the
// real Response, so the text is consumed exactly as a standard body would be.
Object.defineProperties(LightResponse.prototype, {
  body: { get(this: LightResponse) { return realResponse(this).body; } },
  bodyUsed: { get(this: LightResponse) { return this.real?.bodyUsed ?? false; } },
});
for (const name of ["text", "json", "arrayBuffer", "bytes", "blob", "formData"] as const) {
  Object.defineProperty(LightResponse.prototype, name, {
    value(this: LightResponse) {
      return (realResponse(this) as unknown as Record<string, () => Promise<unknown>>)[name]!();
    },
  });
}
// Once the real Response exists its Headers answer, so a reader of the body and of the headers see one object.
Object.defineProperty(LightResponse.prototype, "headers", {
  get(this: LightResponse) {
    return this.real ? this.real.headers : this.fields;
  },
});

/** Text responses in the light form, for an app served by the Node listener. */
export const lightTextResponse: TextResponse = (text, init) => new LightResponse(text, init);

/** The text of a light response nobody has read yet; undefined for any other response. */
export function deferredText(response: Response): string | undefined {
  return response instanceof LightResponse && response.real === undefined ? response.text0 : undefined;
}
