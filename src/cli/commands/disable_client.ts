// `clients disable ID`: the client can no longer authenticate and its tokens stop being accepted.
import { audit } from "../../oauth/audit.ts";
import { UsageError, type Command } from "../types.ts";

export const disableClient: Command = {
  name: "clients disable",
  summary: "disable a client; its tokens stop working",
  positionals: ["CLIENT_ID"],
  flags: {},
  async run({ args, deps, store }) {
    const client = await store.clients.setDisabled(args.positionals[0]!, true);
    if (!client) throw new UsageError(`no client with client_id "${args.positionals[0]}"`);
    await audit({ store, clock: deps.clock, log: deps.log }, "client_disabled", { clientId: client.clientId });
    return {
      json: { client_id: client.clientId, disabled: true },
      text: `Disabled client ${client.clientId}.\n`,
    };
  },
};
