// Client authentication on SQLite (ThrottleStore.authenticateClient): the client's row, the secret check and the
// throttle's count decided together, synchronously, on the rows as committed.
import type { Db, Row } from "./database.ts";
import type { ClientAttempt, ClientCheck, CounterRow, CounterTimes, ThrottleStore } from "../contract.ts";
import { toCounterRow, toTokenClient } from "../rows.ts";
import { decideClientCheck, type Decided } from "../throttle_rules.ts";
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
