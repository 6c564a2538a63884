// JSON text that fieldgate stored itself, placed into a GraphQL response without being parsed and re-serialised.
// A page of 50 fields spent ~11 % of its time in JSON.parse of the stored boundaries and most of the ~18 % in
// JSON.stringify of the result on writing them out again (bench --cpu-prof, page scenario), plus the garbage of
// every coordinate array in between.

/** Stored JSON text, valid by construction (the store's writers keep JSON.stringify output). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  /** Inside stringifyResult: a placeholder that is swapped for the text. Elsewhere: the parsed value. */
  toJSON(): unknown {
    if (!active) return JSON.parse(this.text);
    active.nonce ??= randomNonce();
    active.texts.push(this.text);
    return `${active.nonce}:${active.texts.length - 1}`;
  }
}

/** The serialisation in progress; JSON.stringify is synchronous, so one module-level slot is enough. */
let active: { nonce: string | undefined; texts: string[] } | undefined;

/**
 * 128 random bits, so no string in the data can equal a placeholder: the data was written before the nonce
 * existed and cannot guess it.
 */
function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = "fgraw";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** JSON.stringify(value), with every RawJson in it written as its text verbatim. */
export function stringifyResult(value: unknown): string {
  const context: { nonce: string | undefined; texts: string[] } = { nonce: undefined, texts: [] };
  active = context;
  let json: string;
  try {
    json = JSON.stringify(value);
  } finally {
    active = undefined;
  }
  if (context.nonce === undefined) return json;
  // A scan rather than a RegExp: a pattern with a fresh nonce would be compiled anew for every response.
  const marker = `"${context.nonce}:`;
  let out = "";
  let from = 0;
  for (let at = json.indexOf(marker); at >= 0; at = json.indexOf(marker, from)) {
    const close = json.indexOf('"', at + marker.length);
    out += json.slice(from, at) + context.texts[Number(json.slice(at + marker.length, close))];
    from = close + 1;
  }
  return out + json.slice(from);
}
