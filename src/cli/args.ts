// Argument parsing: --flag VALUE, --flag=VALUE and boolean --flag against a per-command spec; anything else is a UsageError.
import { UsageError, type FlagSpec, type ParsedArgs } from "./types.ts";

/** Flags every command accepts. */
export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  db: {
    type: "string",
    value: "PATH|URL",
    description: "SQLite file (env FIELDGATE_DB, default data/fieldgate.db) or postgres:// URL (env FIELDGATE_DATABASE_URL)",
  },
  json: { type: "boolean", description: "print one JSON object on stdout" },
  help: { type: "boolean", description: "show this help" },
};

/** Parses `args` against `spec` (global flags included); throws UsageError for unknown, repeated or valueless flags. */
export function parseArgs(args: readonly string[], spec: Record<string, FlagSpec>): ParsedArgs {
  const all = { ...GLOBAL_FLAGS, ...spec };
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${arg}`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const flag = all[name];
    if (!flag) throw new UsageError(`unknown option --${name}${suggestion(name, Object.keys(all))}`);
    if (flags[name] !== undefined && !flag.repeatable) throw new UsageError(`--${name} given more than once`);
    if (flag.type === "boolean") {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq !== -1 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
    const earlier = flags[name];
    flags[name] = flag.repeatable ? [...(Array.isArray(earlier) ? earlier : []), value] : value;
  }
  return { flags, positionals };
}

/** " (did you mean --x?)" when exactly one known flag extends the given name or is a prefix of it, else "". */
function suggestion(given: string, known: readonly string[]): string {
  const near = given === "" ? [] : known.filter((name) => name.startsWith(given) || given.startsWith(name));
  return near.length === 1 ? ` (did you mean --${near[0]}?)` : "";
}

/** The string value of a flag the command cannot do without. */
export function requireFlag(args: ParsedArgs, name: string): string {
  const value = args.flags[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** Every value of a repeatable flag, in the order given; empty when it was not given. */
export function repeatedFlag(args: ParsedArgs, name: string): readonly string[] {
  const value = args.flags[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

/** The string value of an optional flag. */
export function optionalFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  return typeof value === "string" ? value : undefined;
}
