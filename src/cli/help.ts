// Help texts generated from the command table, so usage never drifts from what the parser accepts.
import type { Command, FlagSpec } from "./types.ts";

function flagLines(flags: Record<string, FlagSpec>): string[] {
  return Object.entries(flags).map(([name, spec]) => {
    const left = `--${name}${spec.value ? ` ${spec.value}` : ""}`;
    return `  ${left.padEnd(26)}${spec.description}`;
  });
}

/** The command list shown by `fieldgate --help` or a bare `fieldgate`. */
export function overview(commands: readonly Command[]): string {
  const lines = commands.map((c) => `  ${[c.name, ...c.positionals].join(" ").padEnd(30)}${c.summary}`);
  return [
    "Usage: fieldgate <command> [options]   (npm run --silent fieldgate -- <command>)",
    "",
    "Commands:",
    ...lines,
    "",
    "Every command takes --db PATH, --json and --help. Exit codes: 0 ok, 1 failed, 2 bad arguments.",
    "",
  ].join("\n");
}

/** Usage of one command with its own and the global flags. */
export function commandHelp(command: Command, globals: Record<string, FlagSpec>): string {
  const usage = [`fieldgate ${command.name}`, ...command.positionals, "[options]"].join(" ");
  return [`Usage: ${usage}`, "", command.summary, "", "Options:", ...flagLines(command.flags), ...flagLines(globals), ""]
    .join("\n");
}
