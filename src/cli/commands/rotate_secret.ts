// `clients rotate-secret ID`: a new secret replaces the old one at once (spec §5.6: rotate when exposed).
import { sha256Hex } from "../../crypto/hash.ts";
import { randomToken } from "../../crypto/random.ts";
import { auditChange } from "../audit_change.ts";
import { UsageError, type Command } from "../types.ts";

export const rotateSecret: Command = {
  name: "clients rotate-secret",
  summary: "issue a new client secret; the old one stops working at once",
  positionals: ["CLIENT_ID"],
  flags: {
    "revoke-tokens": { type: "boolean", description: "also revoke every token issued to the client" },
  },
  async run({ args, deps, io, store, now }) {
    const clientId = args.positionals[0]!;
    const clientSecret = randomToken(deps.random, "clientSecret");
    const client = await store.clients.rotateSecret(clientId, {
      secretHash: await sha256Hex(clientSecret),
      now,
      revokeTokens: args.flags["revoke-tokens"] === true,
    });
    if (!client) throw new UsageError(`no client with client_id "${clientId}"`);
    await auditChange({ store, deps, io }, "secret_rotated", {
      clientId: client.clientId,
      detail: { tokens_revoked: args.flags["revoke-tokens"] === true },
    });
    return {
      json: { client_id: client.clientId, client_secret: clientSecret, tokens_revoked: args.flags["revoke-tokens"] === true },
      text: `New secret for ${client.clientId}:\n  client_secret: ${clientSecret}\n` +
        "The old secret no longer works. The new one is shown only now.\n",
    };
  },
};
