// Small pieces of the CLI's human-readable output.

/** "1 field", "3 fields": a count with its noun. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
