// `audit [--since T] [--limit N] [--user USERNAME] [--client CLIENT_ID]`: security events (token issued, reuse detected, sign-in failed…), oldest first:
// the latest N, or the first N from T.
import { optionalFlag } from "../args.ts";
import { UsageError, type Command, type ParsedArgs } from "../types.ts";
import { namedUser } from "./user_state.ts";

/** --since as epoch seconds; accepts epoch seconds or an ISO 8601 date/time. */
function parseSince(args: ParsedArgs): number | undefined {
  const raw = optionalFlag(args, "since");
  if (raw === undefined) return undefined;
  if (/^\d{1,12}$/.test(raw)) return Number(raw);
  // Only ISO-looking text: Date.parse accepts many loose formats that would surprise a script.
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--since must be an ISO date or epoch seconds, got "${raw}"`);
  return Math.floor(ms / 1000);
}

export const listAudit: Command = {
  name: "audit",
  summary: "list audit events",
  positionals: [],
  flags: {
    since: { type: "string", value: "T", description: "only events at or after T (ISO date or epoch seconds)" },
    limit: { type: "string", value: "N", description: "at most N events (default 1000): the latest, or with --since the first from T" },
    user: { type: "string", value: "USERNAME", description: "only this user's events" },
    client: { type: "string", value: "CLIENT_ID", description: "only events naming this client" },
  },
  validate(args) {
    parseSince(args);
    const limit = optionalFlag(args, "limit");
    if (limit !== undefined && !/^[1-9]\d{0,5}$/.test(limit)) throw new UsageError("--limit must be a whole number from 1 to 999999");
  },
  async run({ args, store }) {
    const limit = Number(optionalFlag(args, "limit") ?? 1000);
    const username = optionalFlag(args, "user");
    const userId = username === undefined ? undefined : (await namedUser(store, username)).id;
    const clientId = optionalFlag(args, "client");
    const events = (await store.audit.list({ since: parseSince(args), limit, userId, clientId })).map((e) => ({
      id: e.id,
      at: new Date(e.at * 1000).toISOString(),
      event: e.event,
      client_id: e.clientId,
      user_id: e.userId,
      ip: e.ip,
      detail: e.detail,
    }));
    const lines = events.map((e) =>
      [e.at, e.event, e.client_id && `client=${e.client_id}`, e.user_id !== null && `user=${e.user_id}`, e.ip && `ip=${e.ip}`,
        e.detail && JSON.stringify(e.detail)].filter(Boolean).join("  ")
    );
    return { json: { events }, text: events.length ? lines.join("\n") + "\n" : "No audit events.\n" };
  },
};
