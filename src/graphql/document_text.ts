// One pass over a query's characters before parse: the cache key with insignificant text collapsed, and the nesting depth.

/** What a query text looks like before any recursive code reads it. */
export interface TextShape {
  /**
   * The text with each run of ignored tokens (white space, line terminators, commas, comments, BOM; GraphQL spec
   * §2.1.7) outside string and block string literals turned into one space, and none at either end: two texts with
   * the same key lex to the same tokens, so whitespace variants of one document share a cache entry.
   */
  key: string;
  /** Deepest nesting of `{`, `[` and `(` outside literals, which is how deep graphql-js's recursive parser descends. */
  nesting: number;
}

/**
 * Deepest nesting of `{ [ (` in a query, of selection sets through fragment spreads, and of JSON variables. graphql-js
 * parses, validates and executes by recursion and overflows its stack near 3 000 levels (less inside a request); 256
 * leaves room for the deepest query FIELDGATE_GRAPHQL_MAX_DEPTH (at most 100) admits, with an inline fragment at
 * every level.
 */
export const MAX_NESTING = 256;

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const COMMA = 0x2c;
const BOM = 0xfeff;
const HASH = 0x23;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function ignored(c: number): boolean {
  return c === SPACE || c === COMMA || c === LF || c === CR || c === TAB || c === BOM;
}

/** Index just past the string literal opening at `start`, or -1 when a line ends it unterminated (a lexer error). */
function stringEnd(text: string, start: number): number {
  if (text.startsWith('"""', start)) {
    // Block strings span lines; \""" is their only escape (spec §2.9.4).
    for (let i = start + 3; i < text.length; i++) {
      if (text.startsWith('\\"""', i)) i += 3;
      else if (text.startsWith('"""', i)) return i + 3;
    }
    return text.length;
  }
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
    else if (c === LF || c === CR) return -1;
  }
  return text.length;
}

/** Scans `text` once, iteratively, whatever it holds; it never throws. */
export function scanText(text: string): TextShape {
  let key = "";
  let from = 0; // start of the text not yet copied into key
  let changed = false;
  let depth = 0;
  let nesting = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (ignored(c) || c === HASH) {
      const start = i;
      for (;;) {
        const d = text.charCodeAt(i);
        if (ignored(d)) i++;
        else if (d === HASH) while (i < text.length && text.charCodeAt(i) !== LF && text.charCodeAt(i) !== CR) i++;
        else break;
      }
      const edge = start === 0 || i >= text.length;
      const replacement = edge ? "" : " ";
      if (i - start !== replacement.length || c !== SPACE) {
        key += text.slice(from, start) + replacement;
        from = i;
        changed = true;
      }
    } else if (c === QUOTE) {
      const end = stringEnd(text, i);
      // An unterminated string fails to lex: keep the rest verbatim so no valid text can share this key.
      if (end < 0) break;
      i = end;
    } else {
      if (c === 0x7b || c === 0x5b || c === 0x28) nesting = Math.max(nesting, ++depth);
      else if ((c === 0x7d || c === 0x5d || c === 0x29) && depth > 0) depth--;
      i++;
    }
  }
  return { key: changed ? key + text.slice(from) : text, nesting };
}
