// `clients list` and `clients show ID`: registration facts, never the secret digest.
import type { Client, Store } from "../../store/contract.ts";
import { describeClient } from "../registration.ts";
import { UsageError, type Command } from "../types.ts";

async function describe(store: Store, client: Client): Promise<Record<string, unknown>> {
  const user = client.integrationUserId === null ? undefined : await store.users.findById(client.integrationUserId);
  return describeClient(client, user?.username);
}

/** One "key  value" line per fact; epoch-second times (`*_at`) as ISO 8601 for a reader (JSON keeps the number). */
function textOf(c: Record<string, unknown>): string {
  const shown = (key: string, value: unknown) =>
    key.endsWith("_at") && typeof value === "number" ? new Date(value * 1000).toISOString() : value ?? "-";
  return Object.entries(c).map(([key, value]) => `  ${key.padEnd(18)}${shown(key, value)}`).join("\n") + "\n";
}

export const listClients: Command = {
  name: "clients list",
  summary: "list registered clients",
  positionals: [],
  flags: {},
  async run({ store }) {
    const clients = await Promise.all((await store.clients.list()).map((c) => describe(store, c)));
    const lines = clients.map((c) =>
      `${c.client_id}  ${c.resource_server ? "resource_server" : c.grant_type}  ${c.name}${c.disabled ? " (disabled)" : ""}  scope=${c.scope}` +
      (c.require_dpop ? "  dpop=required" : "")
    );
    return { json: { clients }, text: clients.length ? lines.join("\n") + "\n" : "No clients.\n" };
  },
};

export const showClient: Command = {
  name: "clients show",
  summary: "show one client",
  positionals: ["CLIENT_ID"],
  flags: {},
  async run({ args, store }) {
    const client = await store.clients.findByClientId(args.positionals[0]!);
    if (!client) throw new UsageError(`no client with client_id "${args.positionals[0]}"`);
    const described = await describe(store, client);
    return { json: described, text: textOf(described) };
  },
};
