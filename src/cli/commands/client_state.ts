// `clients disable ID` and `clients enable ID`: a disabled client cannot authenticate and its tokens are refused;
// enabled again, its unexpired tokens work again.
import { auditChange } from "../audit_change.ts";
import { UsageError, type Command } from "../types.ts";

function clientStateCommand(disabled: boolean): Command {
  const verb = disabled ? "disable" : "enable";
  return {
    name: `clients ${verb}`,
    summary: disabled ? "disable a client; its tokens stop working" : "enable a disabled client again",
    positionals: ["CLIENT_ID"],
    flags: {},
    async run({ args, deps, io, store }) {
      const client = await store.clients.setDisabled(args.positionals[0]!, disabled);
      if (!client) throw new UsageError(`no client with client_id "${args.positionals[0]}"`);
      await auditChange({ store, deps, io }, disabled ? "client_disabled" : "client_enabled", {
        clientId: client.clientId,
      });
      return {
        json: { client_id: client.clientId, disabled },
        text: `${disabled ? "Disabled" : "Enabled"} client ${client.clientId}.\n`,
      };
    },
  };
}

export const disableClient = clientStateCommand(true);
export const enableClient = clientStateCommand(false);
