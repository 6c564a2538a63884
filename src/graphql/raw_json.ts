// JSON text that fieldgate stored itself, placed into a GraphQL response without being parsed and re-serialised.
// A page of 50 fields spent ~11 % of its time in JSON.parse of the stored boundaries and most of the ~18 % in
// JSON.stringify of the result on writing them out again (bench --cpu-prof, page scenario), plus the garbage of
// every coordinate array in between. One writer per request (GraphqlContext.rawJson), so nothing is shared.
import type { Random } from "../deps.ts";

/** The texts of one serialisation in progress, and the nonce that marks their places; per writer. */
interface Splice {
  random: Random;
  nonce: string | undefined;
  /** Set only while the writer's stringify runs. */
  texts: string[] | undefined;
}

/** Stored JSON text, valid by construction (the store's writers keep JSON.stringify output). */
export class RawJson {
  readonly text: string;
  readonly #splice: Splice;
  constructor(text: string, splice: Splice) {
    this.text = text;
    this.#splice = splice;
  }
  /** Inside its writer's stringify: a placeholder that is swapped for the text. Elsewhere: the parsed value. */
  toJSON(): unknown {
    const splice = this.#splice;
    if (!splice.texts) return JSON.parse(this.text);
    splice.nonce ??= randomNonce(splice.random);
    splice.texts.push(this.text);
    return `${splice.nonce}:${splice.texts.length - 1}`;
  }
}

/** Wraps stored JSON text and writes results with it spliced in; one per request. */
export interface RawJsonWriter {
  /** Stored JSON text as a resolver's result. */
  wrap(text: string): RawJson;
  /** JSON.stringify(value), with every RawJson this writer wrapped written as its text verbatim. */
  stringify(value: unknown): string;
}

/**
 * 128 random bits, so no string in the data can equal a placeholder: the data was written before the nonce
 * existed and cannot guess it.
 */
function randomNonce(random: Random): string {
  let hex = "fgraw";
  for (const b of random(16)) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** A writer whose placeholders' nonce is drawn from `random` when the first stored text is written. */
export function createRawJsonWriter(random: Random): RawJsonWriter {
  const splice: Splice = { random, nonce: undefined, texts: undefined };
  return {
    wrap: (text) => new RawJson(text, splice),
    stringify(value) {
      const texts: string[] = [];
      splice.texts = texts;
      let json: string;
      try {
        json = JSON.stringify(value);
      } finally {
        splice.texts = undefined;
      }
      if (texts.length === 0) return json;
      // A scan rather than a RegExp: a pattern with a fresh nonce would be compiled anew for every response.
      const marker = `"${splice.nonce}:`;
      let out = "";
      let from = 0;
      for (let at = json.indexOf(marker); at >= 0; at = json.indexOf(marker, from)) {
        const close = json.indexOf('"', at + marker.length);
        out += json.slice(from, at) + texts[Number(json.slice(at + marker.length, close))];
        from = close + 1;
      }
      return out + json.slice(from);
    },
  };
}
