// Raw-mode line editing for secrets typed at a terminal.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { createHiddenLine } from "../../src/cli/hidden_line.ts";

function typed(...chunks: string[]): { status: string; value: string } {
  const line = createHiddenLine();
  let status = "more";
  for (const chunk of chunks) {
    status = line.feed(chunk);
    if (status !== "more") break;
  }
  return { status, value: line.value };
}

const cases: Array<{ name: string; chunks: string[]; status: string; value: string }> = [
  { name: "Enter ends the line", chunks: ["correct horse\r"], status: "done", value: "correct horse" },
  { name: "a newline ends it too", chunks: ["abc\n"], status: "done", value: "abc" },
  { name: "keys arrive one by one", chunks: ["a", "b", "c", "\r"], status: "done", value: "abc" },
  { name: "Backspace (DEL) removes the last character", chunks: ["abx\x7fc\r"], status: "done", value: "abc" },
  { name: "Backspace (BS) removes the last character", chunks: ["abx\bc\r"], status: "done", value: "abc" },
  { name: "Backspace removes a whole emoji", chunks: ["a🌾\x7f\r"], status: "done", value: "a" },
  { name: "Backspace on an empty line is harmless", chunks: ["\x7f\x7fa\r"], status: "done", value: "a" },
  { name: "Ctrl-U clears the line", chunks: ["wrong\x15right\r"], status: "done", value: "right" },
  { name: "Ctrl-C cancels", chunks: ["secret\x03more\r"], status: "cancelled", value: "secret" },
  { name: "Ctrl-D ends the line", chunks: ["abc\x04"], status: "done", value: "abc" },
  { name: "an arrow key's escape sequence is dropped", chunks: ["ab", "\x1b[D", "c\r"], status: "done", value: "abc" },
  { name: "keys after an escape sequence in the same read still count", chunks: ["abcdefghij\x1b[Aklm\r"], status: "done", value: "abcdefghijklm" },
  { name: "a CSI sequence with parameters is dropped whole", chunks: ["a\x1b[1;5Cb\r"], status: "done", value: "ab" },
  { name: "an SS3 function key is dropped", chunks: ["abc\x1bOPdef\r"], status: "done", value: "abcdef" },
  { name: "an Alt-modified key is dropped", chunks: ["ab\x1bxc\r"], status: "done", value: "abc" },
  { name: "Alt with an arrow marked by a second ESC (rxvt) is dropped whole", chunks: ["secret", "\x1b\x1b[A", "\r"], status: "done", value: "secret" },
  { name: "Enter inside an unfinished sequence still ends the line", chunks: ["secret\x1b[12\r"], status: "done", value: "secret" },
  { name: "Ctrl-C inside an unfinished sequence still cancels", chunks: ["secret\x1b[1\x03"], status: "cancelled", value: "secret" },
  { name: "an escape cut off at the end of a read drops only itself", chunks: ["ab\x1b", "c\r"], status: "done", value: "abc" },
  { name: "other control characters are ignored", chunks: ["a\tb\x07c\r"], status: "done", value: "abc" },
  { name: "without Enter the line is not done", chunks: ["abc"], status: "more", value: "abc" },
  { name: "non-ASCII text is kept", chunks: ["pässwört\r"], status: "done", value: "pässwört" },
];

for (const row of cases) {
  test(`hidden line: ${row.name}`, () => {
    assert.deepEqual(typed(...row.chunks), { status: row.status, value: row.value });
  });
}
