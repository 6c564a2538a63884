// `users set-password USERNAME --password-stdin`: a new password for a person; every session of theirs ends.
import { hashPassword } from "../../crypto/hash.ts";
import { audit } from "../../oauth/audit.ts";
import { PASSWORD_PROMPT, passwordFromStdin } from "../registration.ts";
import { CommandError, UsageError, type Command } from "../types.ts";
import { namedUser } from "./user_state.ts";

export const setPassword: Command = {
  name: "users set-password",
  summary: "set a person's password (from stdin) and end their sign-in sessions",
  positionals: ["USERNAME"],
  flags: {
    "password-stdin": { type: "boolean", description: "read the new password from stdin (required; never on argv)" },
  },
  readsStdin: (args) => args.flags["password-stdin"] === true,
  stdinPrompt: PASSWORD_PROMPT,
  validate(args, stdin) {
    // Passwords on argv end up in shell history and `ps`; stdin is the only way in.
    if (args.flags["password-stdin"] !== true) throw new UsageError("--password-stdin is required");
    passwordFromStdin(stdin ?? "");
  },
  async run({ args, config, deps, store, stdin }) {
    const user = await namedUser(store, args.positionals[0]!);
    if (user.kind !== "person") throw new CommandError(`${user.username} is an integration user: it has no password`);
    const passwordHash = await hashPassword(passwordFromStdin(stdin ?? ""), { iterations: config.pbkdf2Iterations, random: deps.random });
    const { sessionsEnded } = await store.users.replacePassword(user.id, passwordHash);
    await audit({ store, clock: deps.clock, log: deps.log }, "password_changed", { userId: user.id, detail: { sessions_ended: sessionsEnded } });
    return {
      json: { username: user.username, sessions_ended: sessionsEnded },
      text: `Set a new password for ${user.username}; ${sessionsEnded} sign-in session${sessionsEnded === 1 ? "" : "s"} ended.\n`,
    };
  },
};
