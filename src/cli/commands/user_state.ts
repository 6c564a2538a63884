// `users disable USERNAME` and `users enable USERNAME`: someone who left, or whose account is suspected stolen.
// Disabling ends their sign-in sessions at once; their tokens are refused while disabled.
import { audit } from "../../oauth/audit.ts";
import type { Store } from "../../store/store.ts";
import type { User } from "../../store/users.ts";
import { UsageError, type Command } from "../types.ts";

/** The user a USERNAME positional names; unknown is a bad argument (exit 2), as for every other name. */
export async function namedUser(store: Store, username: string): Promise<User> {
  const user = await store.users.findByUsername(username);
  if (!user) throw new UsageError(`no user "${username}"`);
  return user;
}

function userStateCommand(disabled: boolean): Command {
  const verb = disabled ? "disable" : "enable";
  return {
    name: `users ${verb}`,
    summary: disabled
      ? "disable a user: sign-in refused, sessions ended, tokens refused"
      : "enable a disabled user again",
    positionals: ["USERNAME"],
    flags: {},
    async run({ args, deps, store }) {
      const user = await namedUser(store, args.positionals[0]!);
      const { sessionsEnded } = await store.users.setDisabled(user.id, disabled);
      await audit({ store, clock: deps.clock, log: deps.log }, disabled ? "user_disabled" : "user_enabled", {
        userId: user.id,
        detail: disabled ? { sessions_ended: sessionsEnded } : undefined,
      });
      const ended = disabled ? `; ${sessionsEnded} sign-in session${sessionsEnded === 1 ? "" : "s"} ended` : "";
      return {
        json: { username: user.username, disabled, sessions_ended: sessionsEnded },
        text: `${disabled ? "Disabled" : "Enabled"} user ${user.username}${ended}.\n`,
      };
    },
  };
}

export const disableUser = userStateCommand(true);
export const enableUser = userStateCommand(false);
