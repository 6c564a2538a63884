// Keystrokes of a secret typed at a terminal in raw mode (no echo): the line editing a cooked terminal would do.

/** What the keys fed so far mean: keep reading, the line is complete, or the user gave up (Ctrl-C). */
export type HiddenLineStatus = "more" | "done" | "cancelled";

export interface HiddenLine {
  /** Feeds decoded keystrokes; returns "done" at Enter or Ctrl-D, "cancelled" at Ctrl-C. */
  feed(text: string): HiddenLineStatus;
  /** The line typed so far, without its Enter. */
  readonly value: string;
}

/**
 * A line editor for raw-mode input: printable characters are kept, Backspace removes the last character (a whole
 * code point, so an emoji goes at once), Ctrl-U clears the line, and an escape sequence (an arrow or function key,
 * an Alt-modified key) is dropped, sequence only: keys typed after it in the same read still count.
 */
export function createHiddenLine(): HiddenLine {
  let chars: string[] = [];
  return {
    feed(text) {
      const keys = [...text];
      for (let i = 0; i < keys.length; i++) {
        const ch = keys[i]!;
        if (ch === "\r" || ch === "\n" || ch === "\x04") return "done";
        if (ch === "\x03") return "cancelled";
        if (ch === "\x1b") i = escapeEnd(keys, i);
        else if (ch === "\x7f" || ch === "\b") chars.pop();
        else if (ch === "\x15") chars = [];
        else if (ch >= " ") chars.push(ch);
      }
      return "more";
    },
    get value() {
      return chars.join("");
    },
  };
}

/**
 * The index of the last key of the escape sequence starting at `start` (ECMA-48): CSI (ESC [, parameter and
 * intermediate bytes, then a final byte @ to ~), SS3 (ESC O and one key), or ESC and one key (Alt). A sequence cut
 * off by the end of the read ends there.
 */
function escapeEnd(keys: readonly string[], start: number): number {
  const next = keys[start + 1];
  // Alt with an arrow on terminals that mark Alt by a second ESC (rxvt): ESC ESC [ A.
  if (next === "\x1b") return escapeEnd(keys, start + 1);
  if (next === "[") {
    let i = start + 2;
    // A control key inside a sequence (Enter, Ctrl-C) is acted on, as terminals do: the sequence ends before it.
    while (i < keys.length && keys[i]! >= " " && !(keys[i]! >= "@" && keys[i]! <= "~")) i++;
    if (i < keys.length && keys[i]! < " ") return i - 1;
    return Math.min(i, keys.length - 1);
  }
  if (next === "O") return Math.min(start + 2, keys.length - 1);
  return Math.min(start + 1, keys.length - 1);
}
