// Client authentication on SQLite (ThrottleStore.authenticateClient): the client's row, the secret check and the
// throttle's count decided together, synchronously, on the rows as committed.
import type { Db, Row } from "./database.ts";
import type { ClientAttempt, ClientCheck, CounterRow, CounterTimes, ThrottleStore, TokenClient } from "../contract.ts";
import { toCounterRow, toTokenClient } from "../rows.ts";
import { counterAt, type Decided, waitOf, withFailure } from "../throttle_rules.ts";
import { sqliteCounters } from "./throttles.ts";

/**
 * One row whatever exists: the client ?1 with whether its integration user may act (LEFT JOIN: authorization_code
 * clients have none, and a missing one reads as not enabled), and the counter that gates it: ?2 for a registered
 * client, ?3 (the address's) for an unknown one. One statement, so one snapshot and one read transaction.
 */
const CLIENT_AND_GATE = `SELECT c.id, c.client_id, c.secret_hash, c.grant_type, c.redirect_uri, c.scope,
  c.integration_user_id, c.disabled, c.resource_server, c.require_dpop, u.disabled = 0 AS user_enabled, g.window_end, g.failures
  FROM (SELECT ?1 AS client_id) p
  LEFT JOIN clients c ON c.client_id = p.client_id
  LEFT JOIN users u ON u.id = c.integration_user_id
  LEFT JOIN throttle_counters g ON g.key = CASE WHEN c.id IS NULL THEN ?3 ELSE ?2 END`;

/** Compared against when the client_id is unknown, so unknown and known ids take the same time. */
const NO_CLIENT_DIGEST = "0".repeat(64);

/** True when two digests are equal, in a time that depends on their length alone (the stored one's is public). */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The rule of ThrottleStore.authenticateClient over the client's row and the counters as read: refused unchecked
 * while the gate (the client's own key, the address's for an unknown client) is at its limit; otherwise a right
 * secret of an enabled client authenticates and clears the gate's failures, and anything else is a failure counted
 * on the gate and on the address.
 */
export function decideClientCheck(
  client: TokenClient | undefined,
  rows: ReadonlyMap<string, CounterRow>,
  { digest, keys }: ClientAttempt,
  times: CounterTimes,
): Decided<ClientCheck> {
  const writes = new Map<string, CounterRow>();
  const gate = client ? keys.registered : keys.unknown;
  const wait = gate ? waitOf(counterAt(rows.get(gate.key), times), gate.limit, times.now) : 0;
  if (wait > 0) return { result: { outcome: "refused", wait, client }, writes };
  const matches = digest !== undefined && sameDigest(digest, client?.secretHash ?? NO_CLIENT_DIGEST);
  if (client && !client.disabled && matches) {
    if (gate && (rows.get(gate.key)?.failures ?? 0) > 0) writes.set(gate.key, { windowEnd: 0, failures: 0 });
    return { result: { outcome: "authenticated", client }, writes };
  }
  let lockout = false;
  for (const key of gate === keys.unknown ? [gate] : [gate, keys.unknown]) {
    if (!key) continue;
    const row = withFailure(rows.get(key.key), times);
    writes.set(key.key, row);
    if (row.failures === key.limit) lockout = true;
  }
  return { result: { outcome: "failed", lockout, client }, writes };
}

/** SQLite's authenticateClient over `db`. */
export function createClientAuthentication(db: Db): ThrottleStore["authenticateClient"] {
  const { read, write } = sqliteCounters(db);
  /** The decision on the rows as committed; `counting`: with the address's counter too, which a failure needs. */
  const decide = (attempt: ClientAttempt, times: CounterTimes, counting: boolean): Decided<ClientCheck> => {
    const { registered, unknown } = attempt.keys;
    const row = db.prepare(CLIENT_AND_GATE).get(attempt.clientId, registered?.key ?? null, unknown?.key ?? null) as Row;
    const client = row.id === null ? undefined : toTokenClient(row);
    const gate = client ? registered : unknown;
    const rows = new Map<string, CounterRow>();
    if (gate && row.failures !== null) rows.set(gate.key, toCounterRow(row));
    const address = counting && client && unknown ? read(unknown.key) : undefined;
    if (address) rows.set(unknown!.key, address);
    return decideClientCheck(client, rows, attempt, times);
  };
  return async (attempt, times) => {
    // Most requests are a right secret whose gate holds no failures: that decision writes nothing, so the read
    // answers it, and a refusal too (it counts nothing). A decision that writes is taken again inside the write
    // transaction, on the rows as committed, so parallel attempts from any process each see the counts before them.
    const seen = decide(attempt, times, false);
    if (seen.writes.size === 0) return seen.result;
    return await db.transactionBatched(() => {
      const { result, writes } = decide(attempt, times, true);
      write(writes);
      return result;
    });
  };
}
