// runCli(args, io, deps): finds the command in the table, validates everything, then runs it; returns an exit code.
import { checkDatabaseLocation, isPostgresUrl, loadConfig } from "../config.ts";
import { nowSeconds } from "../deps.ts";
import { StoreConflictError } from "../store/errors.ts";
import { RegistrationError } from "../oauth/registration.ts";
import { GLOBAL_FLAGS, optionalFlag, parseArgs } from "./args.ts";
import { addClient } from "./commands/add_client.ts";
import { addUser } from "./commands/add_user.ts";
import { backup } from "./commands/backup.ts";
import { allowBearer, disableClient, enableClient, requireDpop } from "./commands/client_state.ts";
import { importDoorkeeper } from "./commands/import_doorkeeper.ts";
import { importFields } from "./commands/import_fields.ts";
import { listAudit } from "./commands/list_audit.ts";
import { listClients, showClient } from "./commands/list_clients.ts";
import { listUsers } from "./commands/list_users.ts";
import { migrate } from "./commands/migrate.ts";
import { copyStore } from "./commands/copy_store.ts";
import { purge } from "./commands/purge.ts";
import { rotateSecret } from "./commands/rotate_secret.ts";
import { serve } from "./commands/serve.ts";
import { setPassword } from "./commands/set_password.ts";
import { deleteUser } from "./commands/delete_user.ts";
import { deleteClient } from "./commands/delete_client.ts";
import { joinOrganization, leaveOrganization } from "./commands/membership.ts";
import { setRedirectUri } from "./commands/set_redirect_uri.ts";
import { disableUser, enableUser } from "./commands/user_state.ts";
import {
  CommandError,
  UsageError,
  type CliDeps,
  type CliIo,
  type Command,
  type CommandResult,
  type ParsedArgs,
} from "./types.ts";
import { commandHelp, overview } from "./help.ts";
import { openCommandStore } from "./database.ts";
import { messageOf } from "./text.ts";

/** Every command, like the route table: the first one or two words of argv pick one. */
export const COMMANDS: readonly Command[] = [
  serve, addUser, listUsers, disableUser, enableUser, setPassword, deleteUser, joinOrganization, leaveOrganization,
  addClient, listClients, showClient, disableClient, enableClient, requireDpop, allowBearer, deleteClient, rotateSecret, setRedirectUri,
  importFields, importDoorkeeper, purge, listAudit, backup, migrate, copyStore,
];

/** Exit codes: 0 success, 1 the command could not be carried out, 2 bad arguments (nothing written). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

function findCommand(args: readonly string[]): { command: Command; rest: string[] } | undefined {
  const two = `${args[0]} ${args[1]}`;
  const command = COMMANDS.find((c) => c.name === two) ?? COMMANDS.find((c) => c.name === args[0]);
  if (!command) return undefined;
  return { command, rest: args.slice(command.name.split(" ").length) };
}

// Command-line flags override the environment by becoming environment entries, so loadConfig stays the one reader.
function effectiveEnv(args: ParsedArgs, env: CliDeps["env"]): Record<string, string | undefined> {
  // An empty value is a mistake, never a choice: `--db "$DB"` with DB unset would otherwise fall back to the default
  // database, and `users delete` would erase someone there.
  for (const flag of ["db", "port", "host", "base-url"]) {
    if (optionalFlag(args, flag) === "") throw new UsageError(`--${flag} needs a value`);
  }
  const overrides: Record<string, string | undefined> = {
    PORT: optionalFlag(args, "port"),
    HOST: optionalFlag(args, "host"),
    FIELDGATE_BASE_URL: optionalFlag(args, "base-url"),
  };
  const merged = { ...env };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
  // --db names the database, of either kind, in place of whatever the environment named: it sets the variable for
  // its kind and clears the other's, so it never meets the environment's choice as "both set".
  const db = optionalFlag(args, "db");
  if (db !== undefined) {
    asUsage(() => checkDatabaseLocation("--db", db));
    const [set, cleared] = isPostgresUrl(db)
      ? ["FIELDGATE_DATABASE_URL", "FIELDGATE_DB"]
      : ["FIELDGATE_DB", "FIELDGATE_DATABASE_URL"];
    merged[set] = db;
    delete merged[cleared];
  }
  return merged;
}

function checkPositionals(command: Command, args: ParsedArgs): void {
  if (args.positionals.length === command.positionals.length) return;
  const expected = command.positionals.length ? command.positionals.join(" ") : "no positional arguments";
  // Counted, not echoed: a password typed as an argument by mistake would otherwise reach stderr and the job's logs.
  throw new UsageError(`${command.name} takes ${expected}, got ${args.positionals.length} positional argument${args.positionals.length === 1 ? "" : "s"}`);
}

function loadValidConfig(env: Record<string, string | undefined>) {
  return asUsage(() => loadConfig(env));
}

function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    // Bad settings are TypeError/RangeError naming the variable or flag (config.ts); here they are bad arguments.
    if (error instanceof TypeError || error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
}

async function execute(command: Command, rest: string[], io: CliIo, deps: CliDeps): Promise<number> {
  const args = parseArgs(rest, command.flags);
  if (args.flags.help === true) {
    io.stdout(commandHelp(command, GLOBAL_FLAGS));
    return EXIT.ok;
  }
  checkPositionals(command, args);
  const stdin = command.readsStdin?.(args) ? await io.readStdin({ hidden: command.stdinPrompt }) : undefined;
  command.validate?.(args, stdin, deps);
  const env = effectiveEnv(args, deps.env);
  const config = loadValidConfig(env);
  const context = { args, config, env, io, deps, stdin, now: nowSeconds(deps.clock) };
  if (command.opensDatabase) return report(await command.run(context), args, io);
  const store = await openCommandStore(command, { args, config, deps });
  try {
    return report(await command.run({ ...context, store }), args, io);
  } finally {
    await store.close();
  }
}

/** Writes a command's result (its JSON for --json, else its text); a number is an exit code it chose itself. */
function report(result: CommandResult | number, args: ParsedArgs, io: CliIo): number {
  if (typeof result === "number") return result;
  io.stdout(args.flags.json === true ? JSON.stringify(result.json) + "\n" : result.text);
  return EXIT.ok;
}

/** A refused registration as the CLI reports it: a rejected value is a bad argument, a taken name a failed command. */
function cliErrorOf(error: unknown): unknown {
  if (!(error instanceof RegistrationError)) return error;
  return error.reason === "invalid" ? new UsageError(error.message) : new CommandError(error.message);
}

/** Runs one admin command; writes only through `io` and never exits the process. */
export async function runCli(args: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  if (args.length === 0 || args[0] === "--help" || args[0] === "help") {
    (args.length === 0 ? io.stderr : io.stdout)(overview(COMMANDS));
    return args.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (args[0] === "--version") {
    io.stdout(`${deps.version}\n`);
    return EXIT.ok;
  }
  const found = findCommand(args);
  if (!found) {
    // Only the words before the first option: "bogus --db x" is the command "bogus", not "bogus --db".
    const options = args.findIndex((a) => a.startsWith("-"));
    const words = args.slice(0, Math.min(2, options < 0 ? args.length : options));
    io.stderr(`fieldgate: unknown command "${words.join(" ") || args[0]}"\n\n${overview(COMMANDS)}`);
    return EXIT.usage;
  }
  try {
    return await execute(found.command, found.rest, io, deps);
  } catch (thrown) {
    const error = cliErrorOf(thrown);
    // serve's stderr is a stream of JSON lines that a log collector parses: a failure to start (port in use,
    // database newer than the code) is one more line of it, beside the message for the person at the terminal.
    if (found.command.name === "serve") deps.log("fatal", { error: messageOf(error) });
    if (error instanceof UsageError) {
      io.stderr(`fieldgate ${found.command.name}: ${error.message}\nTry: fieldgate ${found.command.name} --help\n`);
      return EXIT.usage;
    }
    if (error instanceof CommandError || error instanceof StoreConflictError) {
      io.stderr(`fieldgate ${found.command.name}: ${error.message}\n`);
      return EXIT.failed;
    }
    throw error;
  }
}
