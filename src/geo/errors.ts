// GeoJsonError: why an import file, or some of its features, cannot be accepted.

/** One bad feature: its 0-based index in `features`, how to name it to a person, and what is wrong. */
export interface FeatureProblem {
  index: number;
  /** `feature 12` or `feature 12 ("Nord-3")` when the feature has a readable name. */
  label: string;
  message: string;
}

/**
 * A file or features that could not be accepted. Thrown bare (no problems) by the checks of one feature and for
 * the file as a whole; parseFieldCollection collects the per-feature ones into one error listing `problems`.
 */
export class GeoJsonError extends Error {
  /** Index of the first bad feature, or undefined when the file as a whole is wrong. */
  readonly index: number | undefined;
  /** The first few bad features (at most MAX_REPORTED_PROBLEMS), in file order. */
  readonly problems: readonly FeatureProblem[];
  /** How many features are bad in all, which may exceed problems.length. */
  readonly total: number;
  constructor(message: string, found?: { problems: readonly FeatureProblem[]; total: number }) {
    super(message);
    this.name = "GeoJsonError";
    this.problems = found?.problems ?? [];
    this.total = found?.total ?? 0;
    this.index = this.problems[0]?.index;
  }
}

/** A run names this many bad features, so a file with many is fixed in a few runs, not one per feature. */
export const MAX_REPORTED_PROBLEMS = 10;

/** One error naming the first problems, one per line, and how many more there are. */
export function invalidFeatures(problems: readonly FeatureProblem[], total: number): GeoJsonError {
  const lines = problems.map((p) => `${p.label}: ${p.message}`);
  if (total > problems.length) lines.push(`… and ${total - problems.length} more`);
  return new GeoJsonError(lines.join("\n"), { problems, total });
}

/**
 * Text from the file quoted for a message: JSON string syntax, with C1 controls escaped too (JSON.stringify
 * escapes only C0), so a name cannot move the cursor or recolour the terminal that shows the error.
 */
export function quote(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
