// Small pieces of the CLI's human-readable output.

/** "1 field", "3 fields": a count with its noun. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** The message of a thrown value, which need not be an Error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
