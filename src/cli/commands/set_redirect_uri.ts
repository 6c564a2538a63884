// `clients set-redirect-uri CLIENT_ID URI`: an authorization-code client's callback moved (a new domain, say).
// Codes already issued keep the URI they were issued for: their token request must still name it (RFC 6749 §4.1.3).
import { auditChange } from "../audit_change.ts";
import { validateRedirectUri } from "../../oauth/registration.ts";
import { CommandError, UsageError, type Command } from "../types.ts";

export const setRedirectUri: Command = {
  name: "clients set-redirect-uri",
  summary: "replace an authorization-code client's redirect URIs with one",
  positionals: ["CLIENT_ID", "URI"],
  flags: {},
  validate(args) {
    validateRedirectUri(args.positionals[1]!, "URI");
  },
  async run({ args, deps, io, store }) {
    const [clientId, redirectUri] = args.positionals as [string, string];
    // Naming nothing is a bad argument (2); naming a client that has no redirect URI cannot be carried out (1).
    const client = await store.clients.findByClientId(clientId);
    if (!client) throw new UsageError(`no client with client_id "${clientId}"`);
    if (client.grantType !== "authorization_code") {
      throw new CommandError(`${clientId} is a ${client.grantType ?? "resource_server"} client: it has no redirect URI`);
    }
    const previous = await store.clients.replaceRedirectUri(clientId, redirectUri);
    if (previous === undefined) throw new CommandError(`${clientId} is not an authorization-code client`);
    await auditChange({ store, deps, io }, "redirect_uri_changed", {
      clientId,
      detail: { from: previous.join(" "), to: redirectUri },
    });
    return {
      json: { client_id: clientId, redirect_uri: redirectUri, previous_redirect_uri: previous.join(" ") },
      text: `Client ${clientId} now redirects to ${redirectUri} (was ${previous.join(" ")}).\n`,
    };
  },
};
