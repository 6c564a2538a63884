// `users disable USERNAME [--revoke-tokens]` and `users enable USERNAME`: someone who left, or whose account is
// suspected stolen. Disabling ends their sign-in sessions at once; their tokens are refused while disabled, and with
// --revoke-tokens revoked for good, so enabling the account again does not bring back what a thief obtained.
import { auditChange } from "../audit_change.ts";
import type { AccessEnded, Store, User } from "../../store/contract.ts";
import { plural } from "../text.ts";
import { UsageError, type Command } from "../types.ts";

/** The user a USERNAME positional names; unknown is a bad argument (exit 2), as for every other name. */
export async function namedUser(store: Store, username: string): Promise<User> {
  const user = await store.users.findByUsername(username);
  if (!user) throw new UsageError(`no user "${username}"`);
  return user;
}

/** "; 1 sign-in session ended, 3 tokens revoked" for a sentence about an account change. */
export function endedText(ended: AccessEnded): string {
  const revoked = ended.tokensRevoked > 0 ? `, ${plural(ended.tokensRevoked, "token")} revoked` : "";
  return `; ${plural(ended.sessionsEnded, "sign-in session")} ended${revoked}`;
}

function userStateCommand(disabled: boolean): Command {
  const verb = disabled ? "disable" : "enable";
  return {
    name: `users ${verb}`,
    summary: disabled
      ? "disable a user: sign-in refused, sessions ended, tokens refused"
      : "enable a disabled user again",
    positionals: ["USERNAME"],
    flags: disabled
      ? { "revoke-tokens": { type: "boolean", description: "also revoke every token and grant the user holds, for good" } }
      : {},
    async run({ args, deps, io, store, now }) {
      const user = await namedUser(store, args.positionals[0]!);
      const revoke = args.flags["revoke-tokens"] === true;
      const ended = await store.users.setDisabled(user.id, disabled, revoke ? { revokeTokensAt: now } : {});
      await auditChange({ store, deps, io }, disabled ? "user_disabled" : "user_enabled", {
        userId: user.id,
        detail: disabled ? { sessions_ended: ended.sessionsEnded, tokens_revoked: ended.tokensRevoked } : undefined,
      });
      return {
        json: { username: user.username, disabled, sessions_ended: ended.sessionsEnded, tokens_revoked: ended.tokensRevoked },
        text: `${disabled ? "Disabled" : "Enabled"} user ${user.username}${disabled ? endedText(ended) : ""}.\n`,
      };
    },
  };
}

export const disableUser = userStateCommand(true);
export const enableUser = userStateCommand(false);
