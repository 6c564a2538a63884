// `clients add`: registers an authorization_code or client_credentials client, or a resource server; the secret is
// printed this once.
import { auditChange } from "../audit_change.ts";
import { optionalFlag, repeatedFlag, requireFlag } from "../args.ts";
import { describeClient } from "../registration.ts";
import { createClient, MAX_REDIRECT_URIS, validateRedirectUri, validateScope } from "../../oauth/registration.ts";
import type { ClientGrantType } from "../../store/contract.ts";
import { UsageError, type Command, type ParsedArgs } from "../types.ts";

/** The flags that describe a grant, none of which a resource server takes. */
const GRANT_FLAGS = ["grant", "scope", "redirect-uri", "integration-user", "require-dpop"] as const;

function checkArgs(args: ParsedArgs): void {
  const name = requireFlag(args, "name");
  if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
  if (args.flags["resource-server"] === true) {
    // RFC 7662 §2.1's protected resource: it only asks about tokens, so it has no grant, scope or callback.
    const given = GRANT_FLAGS.find((flag) => args.flags[flag] !== undefined);
    if (given !== undefined) throw new UsageError(`--${given} does not apply to --resource-server: it obtains no token`);
    return;
  }
  const grant = requireFlag(args, "grant");
  validateScope(requireFlag(args, "scope"));
  const redirectUris = repeatedFlag(args, "redirect-uri");
  const integrationUser = optionalFlag(args, "integration-user");
  if (grant === "authorization_code") {
    if (redirectUris.length === 0) throw new UsageError("--redirect-uri is required for --grant authorization_code");
    if (integrationUser !== undefined) throw new UsageError("--integration-user only applies to --grant client_credentials");
    for (const uri of redirectUris) validateRedirectUri(uri);
    // A duplicate would be harmless to matching but hides a typo in the URI the operator meant to add.
    if (new Set(redirectUris).size !== redirectUris.length) throw new UsageError("--redirect-uri names the same URI twice");
    if (redirectUris.length > MAX_REDIRECT_URIS) throw new UsageError(`at most ${MAX_REDIRECT_URIS} --redirect-uri per client`);
  } else if (grant === "client_credentials") {
    if (integrationUser === undefined) throw new UsageError("--integration-user is required for --grant client_credentials");
    // Spec §1: a client_credentials client acts as its integration user and never sees a browser.
    if (redirectUris.length > 0) throw new UsageError("--redirect-uri only applies to --grant authorization_code");
  } else {
    throw new UsageError(`--grant must be authorization_code or client_credentials, got "${grant}"`);
  }
}

/** The grant the flags ask for; null for a resource server. */
function grantOf(args: ParsedArgs): ClientGrantType | null {
  if (args.flags["resource-server"] === true) return null;
  return requireFlag(args, "grant") === "client_credentials" ? "client_credentials" : "authorization_code";
}

export const addClient: Command = {
  name: "clients add",
  // A client_credentials client needs its integration user, which a new database cannot hold: on a mistyped --db
  // the command would create and migrate a file only to refuse, and later commands would find it ("No users.").
  createsDatabase: (args) => optionalFlag(args, "grant") !== "client_credentials",
  summary: "register a client or a resource server; prints its client_id and client_secret once",
  positionals: [],
  flags: {
    name: { type: "string", value: "N", description: "application name shown on the consent page" },
    grant: { type: "string", value: "GRANT", description: "authorization_code or client_credentials" },
    "redirect-uri": {
      type: "string",
      value: "URI",
      description: "exact callback URI (authorization_code): https, or http on loopback",
      repeatable: true,
    },
    scope: { type: "string", value: "SCOPE", description: 'space-separated scopes, e.g. "fields:read"' },
    "integration-user": { type: "string", value: "U", description: "integration user the client acts as (client_credentials)" },
    "resource-server": {
      type: "boolean",
      description: "an API that introspects any token (RFC 7662); takes no --grant or --scope and obtains no token",
    },
    "require-dpop": { type: "boolean", description: "token requests must carry a DPoP proof (RFC 9449); tokens are always DPoP-bound" },
  },
  validate: checkArgs,
  async run({ args, deps, io, store, now }) {
    const grantType = grantOf(args);
    let integrationUserId: number | null = null;
    const username = optionalFlag(args, "integration-user");
    if (username !== undefined) {
      const user = await store.users.findByUsername(username);
      if (!user || user.kind !== "integration") {
        throw new UsageError(`--integration-user "${username}" is not an integration user (create one with users add --integration)`);
      }
      integrationUserId = user.id;
    }
    const { client, clientSecret } = await createClient(store, {
      name: requireFlag(args, "name"),
      grantType,
      redirectUris: grantType === "authorization_code" ? repeatedFlag(args, "redirect-uri") : [],
      scope: grantType === null ? "" : validateScope(requireFlag(args, "scope")),
      integrationUserId,
      requireDpop: args.flags["require-dpop"] === true,
    }, { random: deps.random, now });
    await auditChange({ store, deps, io }, "client_created", {
      clientId: client.clientId,
      userId: integrationUserId,
      detail: client.grantType === null
        ? { resource_server: true }
        : { grant_type: client.grantType, scope: client.scope, ...(client.requireDpop ? { require_dpop: true } : {}) },
    });
    const registered = client.grantType === null
      ? `resource server "${client.name}"`
      : `client "${client.name}" (${client.grantType})`;
    return {
      json: { ...describeClient(client, username), client_secret: clientSecret },
      text: `Registered ${registered}.\n` +
        `  client_id:     ${client.clientId}\n` +
        `  client_secret: ${clientSecret}\n` +
        "The secret is shown only now; keep it in a secrets store, never in source control or logs.\n",
    };
  },
};
