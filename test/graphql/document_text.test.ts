import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Lexer, Source, TokenKind } from "graphql";
import { scanText } from "../../src/graphql/document_text.ts";

/** The tokens graphql-js's lexer reads, as kind and value; the key must never change them. */
function tokens(text: string): string[] {
  const lexer = new Lexer(new Source(text));
  const out: string[] = [];
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    out.push(`${token.kind}:${token.value ?? ""}`);
  }
  return out;
}

const same = [
  { name: "indentation and line breaks", a: "{\n  fields {\n    total_count\n  }\n}\n", b: "{ fields { total_count } }" },
  { name: "commas, tabs and CRLF", a: "{ a,\tb\r\nc }", b: "{ a b c }" },
  { name: "comments", a: "# who\n{ viewer { id } # me\n}", b: "{ viewer { id } }" },
  { name: "a byte order mark", a: "\ufeff{ __typename }", b: "{ __typename }" },
];

for (const row of same) {
  test(`scanText gives one key to texts that differ only in ${row.name}`, () => {
    assert.equal(scanText(row.a).key, scanText(row.b).key);
    assert.deepEqual(tokens(scanText(row.a).key), tokens(row.a));
  });
}

const different = [
  { name: "spaces inside a string", a: '{ fields(crop: "a  b") { total_count } }', b: '{ fields(crop: "a b") { total_count } }' },
  { name: "a comma inside a string", a: '{ fields(crop: "a,b") { total_count } }', b: '{ fields(crop: "a b") { total_count } }' },
  { name: "a # inside a string", a: '{ fields(crop: "a #b") { total_count } }', b: '{ fields(crop: "a ") { total_count } }' },
  { name: "an escaped quote", a: '{ f(a: "x\\" ,  y") }', b: '{ f(a: "x\\" y") }' },
  { name: "lines inside a block string", a: '{ f(a: """x\n\n  y""") }', b: '{ f(a: """x y""") }' },
  { name: 'an escaped """ inside a block string', a: '{ f(a: """x\\"""  y""") }', b: '{ f(a: """x\\""" y""") }' },
  { name: "an unterminated string against a terminated one", a: '{ f(a: "x\n y") }', b: '{ f(a: "x y") }' },
];

for (const row of different) {
  test(`scanText keeps ${row.name} significant`, () => {
    assert.notEqual(scanText(row.a).key, scanText(row.b).key);
  });
}

test("scanText returns an already normal text itself", () => {
  const text = "{ fields { total_count } }";
  assert.equal(scanText(text).key, text);
});

const nesting = [
  { text: "{ fields { total_count } }", depth: 2 },
  { text: '{ fields(crop: [[["x"]]]) { total_count } }', depth: 5 },
  { text: '{ f(a: "{{{{[[[[") }', depth: 2 },
  { text: '{ f(a: """{{{{""") }', depth: 2 },
  { text: "# {{{{\n{ a }", depth: 1 },
  { text: "}}}{", depth: 1 },
  { text: `{ f(a: ${"[".repeat(100_000)}`, depth: 100_002 },
];

for (const row of nesting) {
  test(`scanText measures ${JSON.stringify(row.text.slice(0, 40))} as nesting ${row.depth}`, () => {
    assert.equal(scanText(row.text).nesting, row.depth);
  });
}

/**
 * Tokens of `text`, or the lexer's error message: a key must fail to lex with the same error as its text. The one
 * difference allowed is which ignored character (or the end) an error names after a broken number or `..`.
 */
function lexed(text: string): string[] | string {
  try {
    return tokens(text);
  } catch (error) {
    return (error as Error).message.replace(/(got: |found )(<EOF>|U\+0009|U\+000A|U\+000D|U\+FEFF|" "|","|"#")/g, "$1<ignored>");
  }
}

test("scanText's key lexes to the same tokens as its text, or fails with the same error, for any mix of pieces", () => {
  const piece = fc.constantFrom(
    "{", "}", "[", "]", "(", ")", ":", "...", "..", ".", "@", "$", "!", "=", "|", "&", "a", "fields", "_x1", "1", "-1.5e3",
    '"a b"', '"a,  b"', '"\\""', '"\\\\"', '"\\u00e9"', '"# not a comment"', '"', '"""', '"""a\n  b"""', '"""x\\"""y"""',
    "#c", "\u00a0", "\t", " ", "  ", ",", "\n", "\r\n", "\ufeff", "\\",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
      const text = pieces.join("");
      assert.deepEqual(lexed(scanText(text).key), lexed(text));
    }),
    { numRuns: 5_000 },
  );
});
