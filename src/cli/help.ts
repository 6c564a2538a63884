// Help texts generated from the command table, so usage never drifts from what the parser accepts.
import type { Command, FlagSpec } from "./types.ts";

/** Two columns; the left one as wide as its longest entry needs, so no entry runs into its description. */
function columns(rows: readonly (readonly [string, string])[], minWidth: number): string[] {
  const width = Math.max(minWidth, ...rows.map(([left]) => left.length + 2));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}

function flagLines(flags: Record<string, FlagSpec>): string[] {
  return columns(Object.entries(flags).map(([name, spec]) => [`--${name}${spec.value ? ` ${spec.value}` : ""}`, spec.repeatable ? `${spec.description} (repeatable)` : spec.description]), 26);
}

/** The command list shown by `fieldgate --help` or a bare `fieldgate`. */
export function overview(commands: readonly Command[]): string {
  const lines = columns(commands.map((c) => [[c.name, ...c.positionals].join(" "), c.summary]), 30);
  return [
    "Usage: fieldgate <command> [options]   (npm run --silent fieldgate -- <command>)",
    "",
    "Commands:",
    ...lines,
    "",
    "Every command takes --db PATH|URL, --json and --help. Exit codes: 0 ok, 1 failed, 2 bad arguments.",
    "fieldgate --version prints the release.",
    "",
  ].join("\n");
}

/** Usage of one command with its own and the global flags. */
export function commandHelp(command: Command, globals: Record<string, FlagSpec>): string {
  const usage = [`fieldgate ${command.name}`, ...command.positionals, "[options]"].join(" ");
  return [`Usage: ${usage}`, "", command.summary, "", "Options:", ...flagLines(command.flags), ...flagLines(globals), ""]
    .join("\n");
}
