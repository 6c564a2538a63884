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
 * code point, so an emoji goes at once), Ctrl-U clears the line, and an escape sequence (an arrow or function key)
 * is dropped with the rest of its read, since a terminal sends each key's sequence in one write.
 */
export function createHiddenLine(): HiddenLine {
  let chars: string[] = [];
  return {
    feed(text) {
      for (const ch of text) {
        if (ch === "\r" || ch === "\n" || ch === "\x04") return "done";
        if (ch === "\x03") return "cancelled";
        if (ch === "\x1b") return "more";
        if (ch === "\x7f" || ch === "\b") chars.pop();
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
