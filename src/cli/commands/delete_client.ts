// `clients delete CLIENT_ID`: an application retired for good. Unlike `clients disable`, nothing comes back: its
// tokens, grants and the approvals users gave it are gone, and it no longer shows on anyone's /account page.
import { auditChange } from "../audit_change.ts";
import { dropWalCopies } from "../erasure.ts";
import { plural } from "../text.ts";
import { UsageError, type Command } from "../types.ts";

export const deleteClient: Command = {
  name: "clients delete",
  summary: "delete a client for good, with its tokens, grants and users' approvals",
  positionals: ["CLIENT_ID"],
  flags: {},
  async run({ args, config, deps, io, store, now }) {
    const removed = await store.clients.remove(args.positionals[0]!, now);
    if (!removed) throw new UsageError(`no client with client_id "${args.positionals[0]}"`);
    const { client, tokensRevoked, consentsRemoved } = removed;
    const integrationUser = client.integrationUserId === null ? undefined : await store.users.findById(client.integrationUserId);
    await auditChange({ store, deps, io }, "client_deleted", {
      clientId: client.clientId,
      detail: { tokens_revoked: tokensRevoked, consents_removed: consentsRemoved },
    });
    await dropWalCopies({ store, io, config });
    const note = integrationUser ? ` Its integration user ${integrationUser.username} stays; \`users delete\` removes it.` : "";
    return {
      json: {
        client_id: client.clientId,
        deleted: true,
        tokens_revoked: tokensRevoked,
        consents_removed: consentsRemoved,
        integration_user: integrationUser?.username ?? null,
      },
      text: `Deleted client ${client.clientId} ("${client.name}"): ${plural(tokensRevoked, "live token")} revoked, ` +
        `${plural(consentsRemoved, "approval")} removed.${note}\n`,
    };
  },
};
