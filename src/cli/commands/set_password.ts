// `users set-password USERNAME --password-stdin [--revoke-tokens]`: a new password for a person; every session of
// theirs ends, and with --revoke-tokens every token and grant they hold is revoked too.
import { hashPassword } from "../../crypto/hash.ts";
import { auditChange } from "../audit_change.ts";
import { PASSWORD_PROMPT, passwordFromStdin } from "../registration.ts";
import { CommandError, UsageError, type Command } from "../types.ts";
import { endedText, namedUser } from "./user_state.ts";

export const setPassword: Command = {
  name: "users set-password",
  summary: "set a person's password (from stdin) and end their sign-in sessions",
  positionals: ["USERNAME"],
  flags: {
    "password-stdin": { type: "boolean", description: "read the new password from stdin (required; never on argv)" },
    "revoke-tokens": { type: "boolean", description: "also revoke every token and grant the user holds" },
  },
  readsStdin: (args) => args.flags["password-stdin"] === true,
  stdinPrompt: PASSWORD_PROMPT,
  validate(args, stdin) {
    // Passwords on argv end up in shell history and `ps`; stdin is the only way in.
    if (args.flags["password-stdin"] !== true) throw new UsageError("--password-stdin is required");
    passwordFromStdin(stdin ?? "");
  },
  async run({ args, config, deps, io, store, stdin, now }) {
    const user = await namedUser(store, args.positionals[0]!);
    if (user.kind !== "person") throw new CommandError(`${user.username} is an integration user: it has no password`);
    const passwordHash = await hashPassword(passwordFromStdin(stdin ?? ""), { iterations: config.pbkdf2Iterations, random: deps.random });
    const revoke = args.flags["revoke-tokens"] === true;
    const ended = await store.users.replacePassword(user.id, passwordHash, revoke ? { revokeTokensAt: now } : {});
    await auditChange({ store, deps, io }, "password_changed", {
      userId: user.id,
      detail: { sessions_ended: ended.sessionsEnded, tokens_revoked: ended.tokensRevoked },
    });
    return {
      json: { username: user.username, sessions_ended: ended.sessionsEnded, tokens_revoked: ended.tokensRevoked },
      text: `Set a new password for ${user.username}${endedText(ended)}.\n`,
    };
  },
};
