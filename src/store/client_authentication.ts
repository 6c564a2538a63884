// Client authentication on SQLite (ThrottleStore.authenticateClient): the client's row, the secret check and the
// throttle's count decided together, synchronously, on the rows as committed.
import type { Db, Row } from "./sqlite.ts";
import { type TokenClient, toTokenClient } from "./clients.ts";
import {
  type ClientAttempt,
  type ClientCheck,
  counterAt,
  type CounterRow,
  type CounterTimes,
  type Decided,
  sqliteCounters,
  toCounterRow,
  type ThrottleStore,
  waitOf,
  withFailure,
} from "./throttles.ts";

/**
 * One row whatever exists: the client ?1 with whether its integration user may act (LEFT JOIN: authorization_code
 * clients have none, and a missing one reads as not enabled), the counter ?2 that gates a registered client, and
 * the address's counter ?3. One statement, so one snapshot and one read transaction.
 */
const CLIENT_AND_COUNTERS = `SELECT c.id, c.client_id, c.secret_hash, c.grant_type, c.redirect_uri, c.scope,
  c.integration_user_id, c.disabled, u.disabled = 0 AS user_enabled,
  g.window_end AS gate_window_end, g.failures AS gate_failures,
  a.window_end AS address_window_end, a.failures AS address_failures
  FROM (SELECT ?1 AS client_id) p
  LEFT JOIN clients c ON c.client_id = p.client_id
  LEFT JOIN users u ON u.id = c.integration_user_id
  LEFT JOIN throttle_counters g ON g.key = ?2
  LEFT JOIN throttle_counters a ON a.key = ?3`;

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
  const { write } = sqliteCounters(db);
  const decide = (attempt: ClientAttempt, times: CounterTimes): Decided<ClientCheck> => {
    const { registered, unknown } = attempt.keys;
    const row = db.prepare(CLIENT_AND_COUNTERS).get(attempt.clientId, registered?.key ?? null, unknown?.key ?? null) as Row;
    const rows = new Map<string, CounterRow>();
    if (registered && row.gate_failures !== null) {
      rows.set(registered.key, toCounterRow({ window_end: row.gate_window_end, failures: row.gate_failures }));
    }
    if (unknown && row.address_failures !== null) {
      rows.set(unknown.key, toCounterRow({ window_end: row.address_window_end, failures: row.address_failures }));
    }
    return decideClientCheck(row.id === null ? undefined : toTokenClient(row), rows, attempt, times);
  };
  return async (attempt, times) => {
    // Most requests are a right secret whose gate holds no failures: that decision writes nothing, so the read
    // answers it, and a refusal too (it counts nothing). A decision that writes is taken again inside the write
    // transaction, on the rows as committed, so parallel attempts from any process each see the counts before them.
    const read = decide(attempt, times);
    if (read.writes.size === 0) return read.result;
    return await db.transactionBatched(() => {
      const { result, writes } = decide(attempt, times);
      write(writes);
      return result;
    });
  };
}
