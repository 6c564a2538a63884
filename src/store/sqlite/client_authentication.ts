// Client authentication on SQLite (ThrottleStore.authenticateClient): the client's row, the secret check and the
// throttle's count decided together, synchronously, inside the write transaction, on the rows as committed.
import type { Db, Row } from "./database.ts";
import type { ThrottleStore } from "../contract.ts";
import { toCounterRow, toTokenClient } from "../rows.ts";
import { decideClientCheck } from "../throttle_rules.ts";
import { sqliteCounters } from "./throttles.ts";

/**
 * One row whatever exists: the client ?1 with whether its integration user may act (LEFT JOIN: authorization_code
 * clients have none, and a missing one reads as not enabled), and the counter that gates it: ?2 for a registered
 * client, ?3 (the address's) for an unknown one.
 */
const CLIENT_AND_GATE = `SELECT c.id, c.client_id, c.secret_hash, c.grant_type, c.redirect_uri, c.scope,
  c.integration_user_id, c.disabled, c.resource_server, c.require_dpop, u.disabled = 0 AS user_enabled, g.window_end, g.failures
  FROM (SELECT ?1 AS client_id) p
  LEFT JOIN clients c ON c.client_id = p.client_id
  LEFT JOIN users u ON u.id = c.integration_user_id
  LEFT JOIN throttle_counters g ON g.key = CASE WHEN c.id IS NULL THEN ?3 ELSE ?2 END`;

/**
 * SQLite's authenticateClient over `db`: one job of the group commit (Db.transactionBatched), whatever the outcome.
 * The write lock orders parallel attempts from any process, so each sees the counts before it. It also makes the
 * usual request cheap: a read outside a transaction opens a WAL read transaction of its own, which after each
 * commit costs more than the statement (about 10 µs of a token's 120–140), while here the read shares the turn's
 * transaction with the writes queued beside it (`npm run bench`, token issuance 129–139 → 112–117 µs CPU).
 */
export function createClientAuthentication(db: Db): ThrottleStore["authenticateClient"] {
  const { read, write } = sqliteCounters(db);
  return (attempt, times) =>
    db.transactionBatched(() => {
      const { registered, unknown } = attempt.keys;
      const row = db.prepare(CLIENT_AND_GATE).get(attempt.clientId, registered?.key ?? null, unknown?.key ?? null) as Row;
      const client = row.id === null ? undefined : toTokenClient(row);
      const gate = row.failures === null ? undefined : toCounterRow(row);
      // The address's counter is read only when a registered client's failure counts on it.
      const decided = decideClientCheck(client, { gate, address: () => unknown && read(unknown.key) }, attempt, times);
      write(decided.writes);
      return decided.result;
    });
}
