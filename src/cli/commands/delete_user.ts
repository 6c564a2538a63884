// `users delete USERNAME`: erasure of a person who asks for it or has left for good. Unlike `users disable` it
// cannot be undone: what identifies the person goes, and only an anonymous row keeps their id from being reused.
import { auditChange } from "../audit_change.ts";
import { dropWalCopies } from "../erasure.ts";
import { plural } from "../text.ts";
import { CommandError, type Command } from "../types.ts";
import { namedUser } from "./user_state.ts";

export const deleteUser: Command = {
  name: "users delete",
  summary: "erase a user for good: tokens, sessions, approvals, memberships, name and password",
  positionals: ["USERNAME"],
  flags: {},
  async run({ args, config, deps, io, store, now }) {
    const user = await namedUser(store, args.positionals[0]!);
    const outcome = await store.users.erase(user.id, now);
    if (outcome.status === "client_integration_user") {
      throw new CommandError(`${user.username} is the integration user of client ${outcome.clientId}: disable the client instead`);
    }
    // Erased by another command between the look-up and the write: the same answer as for an unknown name.
    if (outcome.status === "missing") throw new CommandError(`no user "${user.username}"`);
    const counts = {
      sessions_ended: outcome.sessionsEnded,
      tokens_revoked: outcome.tokensRevoked,
      consents_removed: outcome.consents,
      memberships_removed: outcome.memberships,
      audit_events_anonymized: outcome.auditEventsAnonymized,
    };
    // The event names the tombstone's id only: the username is what was just erased.
    await auditChange({ store, deps, io }, "user_deleted", { userId: user.id, detail: counts });
    await dropWalCopies({ store, io, config });
    return {
      json: { username: user.username, deleted: true, ...counts },
      text: `Deleted user ${user.username}: ${plural(outcome.tokensRevoked, "live token")} revoked, ` +
        `${plural(outcome.sessionsEnded, "sign-in session")} ended, ${plural(outcome.consents, "approval")} and ` +
        `${plural(outcome.memberships, "membership")} removed, client addresses removed from ` +
        `${plural(outcome.auditEventsAnonymized, "audit event")}.\n`,
    };
  },
};
