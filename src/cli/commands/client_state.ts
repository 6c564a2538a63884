// `clients disable/enable ID`: a disabled client cannot authenticate and its tokens are refused; enabled again, its
// unexpired tokens work again. `clients require-dpop/allow-bearer ID`: whether its token requests need a DPoP proof.
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

/** `clients require-dpop ID` and `clients allow-bearer ID`: whether the client's token requests need a DPoP proof. */
function clientDpopCommand(required: boolean): Command {
  return {
    name: required ? "clients require-dpop" : "clients allow-bearer",
    summary: required
      ? "make a client's token requests need a DPoP proof (its new tokens are all DPoP-bound)"
      : "let a client obtain Bearer tokens again (a proof still binds its tokens)",
    positionals: ["CLIENT_ID"],
    flags: {},
    async run({ args, deps, io, store }) {
      // A resource server obtains no token, so there is nothing to bind.
      if ((await store.clients.findByClientId(args.positionals[0]!))?.grantType === null) {
        throw new UsageError(`"${args.positionals[0]}" is a resource server: it obtains no token`);
      }
      const client = await store.clients.setRequireDpop(args.positionals[0]!, required);
      if (!client) throw new UsageError(`no client with client_id "${args.positionals[0]}"`);
      await auditChange({ store, deps, io }, "client_dpop_changed", { clientId: client.clientId, detail: { require_dpop: required } });
      return {
        json: { client_id: client.clientId, require_dpop: required },
        // Tokens already issued keep working until they expire: revoke them (clients rotate-secret) to end them now.
        text: `Client ${client.clientId} ${required ? "now needs a DPoP proof" : "may obtain Bearer tokens again"}; tokens already issued are unchanged.\n`,
      };
    },
  };
}

export const disableClient = clientStateCommand(true);
export const enableClient = clientStateCommand(false);
export const requireDpop = clientDpopCommand(true);
export const allowBearer = clientDpopCommand(false);
