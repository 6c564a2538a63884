// throttle_counters on PostgreSQL: one statement per operation on the request path (client authentication reads first
// and runs its locked statement only to count or clear); several keys lock in key order.
import type { PgClient, PgQueryable } from "./connect.ts";
import { TOKEN_CLIENT_SQL } from "./clients.ts";
import { toCounterRow, toTokenClient } from "../rows.ts";
import type { ClientAttempt, ClientCheck, CounterKey, CounterRow, CounterTimes, ThrottleStore, TokenClient } from "../contract.ts";
import type { RememberedClients } from "./remembered_clients.ts";
import { decideCharge, decideClientCheck, type Decided } from "../throttle_rules.ts";

/** Keys travel as one JSON text parameter (cast to json for json_to_recordset): the pool binds no arrays. */
const json = (value: unknown) => JSON.stringify(value);

/** A NUL or a lone surrogate, which PostgreSQL text cannot hold: a key may embed whatever a form carried. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `keys` with what PostgreSQL cannot store replaced (U+FFFD): keys differing only there share one counter. */
function storable<T extends { key: string }>(keys: readonly T[]): T[] {
  return keys.map((entry) => ({ ...entry, key: storableKey(entry.key) }));
}

/** One key as the counters store it. */
function storableKey(key: string): string {
  return key.replace(UNSTORABLE, "\uFFFD");
}

// In the statements below, a counter's effective failures at now are
//   CASE WHEN now < LEAST(t.window_end, now + window) THEN t.failures ELSE 0 END
// which is store/throttle_rules.ts counterAt in SQL: a window ending further away than one length (the clock went back)
// counts as ending one length away. Several rows are always locked in key order, so two statements never wait on each other in a cycle.

/** The keys' longest wait at $2 (now), $3 being now plus a window; windows the clock went back past are moved. */
const RETRY_AFTER = `WITH k AS (
  SELECT key, max(lim) AS lim FROM json_to_recordset($1::text::json) AS k(key text, lim integer) GROUP BY key
),
moved AS (
  UPDATE throttle_counters t SET window_end = $3::bigint
  WHERE t.key IN (SELECT key FROM throttle_counters WHERE key IN (SELECT key FROM k) AND window_end > $3::bigint
    ORDER BY key FOR UPDATE)
)
SELECT COALESCE(MAX(LEAST(t.window_end, $3::bigint) - $2::bigint), 0) AS wait
FROM throttle_counters t JOIN k ON k.key = t.key
WHERE (CASE WHEN $2::bigint < LEAST(t.window_end, $3::bigint) THEN t.failures ELSE 0 END) >= k.lim`;

/**
 * Counts the failures ($1: key and lim per entry) at $2 (now), $3 being now plus a window. Each key's new count comes
 * back with how many failures this statement added, so the caller sees whether it crossed the limit.
 */
const FAIL = `WITH f AS (
  SELECT key, max(lim) AS lim, count(*)::integer AS n
  FROM json_to_recordset($1::text::json) AS f(key text, lim integer) GROUP BY key
)
INSERT INTO throttle_counters AS t (key, window_end, failures, pending, pending_end)
SELECT key, $3::bigint, n, 0, 0 FROM f ORDER BY key
ON CONFLICT (key) DO UPDATE SET
  failures = (CASE WHEN $2::bigint < LEAST(t.window_end, $3::bigint) THEN t.failures ELSE 0 END) + excluded.failures,
  window_end = CASE WHEN $2::bigint < LEAST(t.window_end, $3::bigint) THEN LEAST(t.window_end, $3::bigint)
    ELSE $3::bigint END
RETURNING t.failures, (SELECT lim FROM f WHERE f.key = t.key) AS lim, (SELECT n FROM f WHERE f.key = t.key) AS added`;

/**
 * The client $1 (TOKEN_CLIENT_SQL's columns, all null when unknown) and the counter that gates it: $2 for a
 * registered client, $3 (the address's) for an unknown one. A plain read: it locks and writes nothing.
 */
const CLIENT_AND_GATE = `SELECT c.*, g.window_end, g.failures
  FROM (SELECT) AS one LEFT JOIN (${TOKEN_CLIENT_SQL}) c ON true
  LEFT JOIN throttle_counters g ON g.key = CASE WHEN c.id IS NULL THEN $3 ELSE $2 END`;

/**
 * One client authentication ($1 client_id, $2 the presented secret's digest or NULL) under its gate: $3/$4 the
 * registered client's key and limit, $5/$6 the address's (a NULL key is not counted), at $7 (now), $8 being now plus a
 * window. The gate's row is locked by the upsert, whose WHERE sees its latest failures: an attempt at the limit
 * changes nothing and comes back without gate_failures (refused); any other failure is counted there and on the
 * address, and a success clears the gate's failures (writing nothing when it has no row). The digests are compared
 * as SHA-256 under a random prefix per statement, so the comparison's timing tells nothing about the stored one.
 */
const CHECK_CLIENT = `WITH c AS (${TOKEN_CLIENT_SQL}),
n AS (SELECT gen_random_uuid()::text AS v),
g AS (
  SELECT CASE WHEN EXISTS (SELECT 1 FROM c) THEN $3 ELSE $5 END AS key,
    CASE WHEN EXISTS (SELECT 1 FROM c) THEN $4::integer ELSE $6::integer END AS lim,
    COALESCE((SELECT c.disabled = 0 AND $2::text IS NOT NULL
      AND sha256(convert_to(n.v || c.secret_hash, 'UTF8')) = sha256(convert_to(n.v || $2::text, 'UTF8')) FROM c, n), false) AS ok
),
cur AS (SELECT t.window_end, t.failures FROM throttle_counters t JOIN g ON t.key = g.key),
up AS (
  INSERT INTO throttle_counters AS t (key, window_end, failures, pending, pending_end)
  SELECT g.key, CASE WHEN g.ok THEN 0 ELSE $8::bigint END, CASE WHEN g.ok THEN 0 ELSE 1 END, 0, 0 FROM g
  WHERE g.key IS NOT NULL AND (NOT g.ok OR EXISTS (SELECT 1 FROM cur))
  ON CONFLICT (key) DO UPDATE SET
    failures = CASE WHEN excluded.failures = 0 THEN 0
      ELSE (CASE WHEN $7::bigint < LEAST(t.window_end, $8::bigint) THEN t.failures ELSE 0 END) + 1 END,
    window_end = CASE WHEN excluded.failures = 0 THEN 0
      WHEN $7::bigint < LEAST(t.window_end, $8::bigint) THEN LEAST(t.window_end, $8::bigint) ELSE $8::bigint END
  WHERE (CASE WHEN $7::bigint < LEAST(t.window_end, $8::bigint) THEN t.failures ELSE 0 END) < (SELECT lim FROM g)
  RETURNING t.failures
),
addr AS (
  INSERT INTO throttle_counters AS t (key, window_end, failures, pending, pending_end)
  SELECT $5, $8::bigint, 1, 0, 0 FROM g
  WHERE $5::text IS NOT NULL AND NOT g.ok AND g.key IS DISTINCT FROM $5 AND (g.key IS NULL OR EXISTS (SELECT 1 FROM up))
  ON CONFLICT (key) DO UPDATE SET
    failures = (CASE WHEN $7::bigint < LEAST(t.window_end, $8::bigint) THEN t.failures ELSE 0 END) + 1,
    window_end = CASE WHEN $7::bigint < LEAST(t.window_end, $8::bigint) THEN LEAST(t.window_end, $8::bigint)
      ELSE $8::bigint END
  RETURNING t.failures
)
SELECT c.*, g.ok, g.key IS NOT NULL AND (NOT g.ok OR EXISTS (SELECT 1 FROM cur)) AS gated,
  (SELECT failures FROM up) AS gate_failures, g.lim AS gate_limit, (SELECT failures FROM addr) AS address_failures,
  COALESCE((SELECT LEAST(window_end, $8::bigint) - $7::bigint FROM cur
    WHERE (CASE WHEN $7::bigint < LEAST(window_end, $8::bigint) THEN failures ELSE 0 END) >= g.lim), 0) AS wait
FROM g LEFT JOIN c ON true`;

/** How many times authenticateClient asks again when its gate was locked by a failure its snapshot did not show yet. */
const CHECK_RETRIES = 3;

/** Takes back, per key, the forgiven failures or all of them (reset) ($1). */
const RELEASE = `WITH r AS (
  SELECT key, count(*) FILTER (WHERE forgive)::integer AS forgive, bool_or(reset) AS reset
  FROM json_to_recordset($1::text::json) AS r(key text, forgive boolean, reset boolean) GROUP BY key
),
l AS (SELECT key FROM throttle_counters WHERE key IN (SELECT key FROM r) ORDER BY key FOR UPDATE)
UPDATE throttle_counters t SET
  failures = CASE WHEN r.reset THEN 0 ELSE GREATEST(t.failures - r.forgive, 0) END,
  window_end = CASE WHEN r.reset THEN 0 ELSE t.window_end END
FROM r WHERE t.key = r.key AND t.key IN (SELECT key FROM l)`;

/** Creates the missing counters ($1) and locks all of them, returning each as it stands. */
const LOCK = `INSERT INTO throttle_counters AS t (key, window_end, failures, pending, pending_end)
SELECT DISTINCT key, 0::bigint, 0, 0, 0::bigint FROM json_to_recordset($1::text::json) AS k(key text) ORDER BY key
ON CONFLICT (key) DO UPDATE SET failures = t.failures
RETURNING key, window_end, failures`;

/** Stores the counters a locked decision computed ($1). */
const WRITE = `UPDATE throttle_counters t SET window_end = w.window_end, failures = w.failures
FROM json_to_recordset($1::text::json) AS w(key text, window_end bigint, failures integer)
WHERE t.key = w.key`;

/** Deletes the counters ended by $1 without waiting for any a request holds locked: they go at the next purge. */
const PURGE = `WITH gone AS (
  DELETE FROM throttle_counters WHERE key IN (
    SELECT key FROM throttle_counters WHERE window_end <= $1::bigint AND pending_end <= $1::bigint
    FOR UPDATE SKIP LOCKED)
  RETURNING 1
)
SELECT count(*) AS n FROM gone`;

/**
 * Runs a decision on several counters locked for it, then writes its outcome: one transaction, for rules that must
 * hold across keys (count none when one refuses). A refusal writes nothing, so it rolls back.
 */
async function decideLocked<T>(
  pg: PgClient,
  keys: readonly CounterKey[],
  decide: (rows: Map<string, CounterRow>) => Decided<T>,
): Promise<T> {
  // A refusal writes nothing and rolls back, so the empty counters created to lock them vanish with it: keys an
  // attacker rotates through while refused leave no rows behind.
  let refusal: { result: T } | undefined;
  try {
    return await pg.transaction(async (tx: PgQueryable) => {
      refusal = undefined;
      const locked = await tx.query(LOCK, [json(keys.map(({ key }) => ({ key })))]);
      const { result, writes } = decide(new Map(locked.map((row) => [String(row.key), toCounterRow(row)])));
      if (writes.size === 0) throw (refusal = { result });
      await tx.query(WRITE, [json([...writes].map(([key, row]) => ({
        key,
        window_end: row.windowEnd,
        failures: row.failures,
      })))]);
      return result;
    });
  } catch (error) {
    if (refusal !== undefined && error === refusal) return refusal.result;
    throw error;
  }
}

/** The PostgreSQL counters: client authentication and every unconditional change are one statement each. */
export function createPgThrottleStore(pg: PgClient, remembered: RememberedClients): ThrottleStore {
  return {
    async retryAfter(given, { now, windowSeconds }) {
      if (given.length === 0) return 0;
      const keys = storable(given);
      const [row] = await pg.query<{ wait: number }>(RETRY_AFTER, [json(keys.map(({ key, limit }) => ({ key, lim: limit }))), now, now + windowSeconds]);
      return Number(row?.wait ?? 0);
    },
    async fail(given, { now, windowSeconds }) {
      if (given.length === 0) return false;
      const entries = storable(given).map(({ key, limit }) => ({ key, lim: limit }));
      const rows = await pg.query<{ failures: number; lim: number; added: number }>(FAIL, [json(entries), now, now + windowSeconds]);
      // The count reached the limit with this statement's failures: it was under it before them.
      return rows.some((row) => row.failures >= row.lim && row.failures - row.added < row.lim);
    },
    async charge(given, times) {
      if (given.counted.length === 0 && given.checked.length === 0) return { wait: 0, lockout: false };
      const keys = { checked: storable(given.checked), counted: storable(given.counted) };
      return await decideLocked(pg, [...keys.checked, ...keys.counted], (rows) => decideCharge(rows, keys, times));
    },
    async release(entries) {
      if (entries.length === 0) return;
      await pg.query(RELEASE, [json(storable(entries).map(({ key, forgive, reset }) => ({
        key,
        forgive: forgive === true,
        reset: reset === true,
      })))]);
    },
    async authenticateClient(attempt, times) {
      const known = attempt.fromMemory ? answerFromMemory(remembered.get(attempt.clientId), attempt, times) : undefined;
      if (known) return known;
      // Most requests are a right secret whose gate holds no failures, and some are refused while it is at its
      // limit: neither decision writes, so a plain read answers it, as it would under the gate's lock (the locked
      // statement, too, writes nothing for them). A decision that counts or clears runs CHECK_CLIENT.
      const seen = await readClientCheck(pg, attempt, times);
      remembered.set(attempt.clientId, seen.result.client);
      if (seen.writes.size === 0) return seen.result;
      const checked = await checkClient(pg, attempt, times);
      remembered.set(attempt.clientId, checked.client);
      return checked;
    },
    async rememberProof(keyHash, expiresAt) {
      const rows = await pg.query(
        "INSERT INTO dpop_proofs (key_hash, expires_at) VALUES ($1, $2) ON CONFLICT (key_hash) DO NOTHING RETURNING 1 AS added",
        [keyHash, expiresAt],
      );
      return rows.length === 1;
    },
    async count(prefix) {
      const [row] = await pg.query<{ n: number }>("SELECT count(*) AS n FROM throttle_counters WHERE starts_with(key, $1)", [
        storable([{ key: prefix }])[0]!.key,
      ]);
      return Number(row?.n ?? 0);
    },
    async purgeExpired(now) {
      const rows = await pg.query<{ n: number }>(PURGE, [now]);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/** The client check as one statement under the gate's lock (CHECK_CLIENT), counting or clearing what it must. */
async function checkClient(
  pg: PgClient,
  { clientId, digest, keys }: ClientAttempt,
  { now, windowSeconds }: CounterTimes,
): Promise<ClientCheck> {
  const [registered, unknown] = [keys.registered, keys.unknown].map((key) => key && storable([key])[0]!);
  for (let attempt = 1;; attempt++) {
    const [row] = await pg.query(CHECK_CLIENT, [clientId, digest ?? null, registered?.key ?? null,
      registered?.limit ?? 0, unknown?.key ?? null, unknown?.limit ?? 0, now, now + windowSeconds]);
    if (!row) throw new Error("authenticateClient: the statement returned no row");
    const client = row.client_id == null ? undefined : toTokenClient(row);
    const counted = row.gate_failures != null;
    if (row.gated && !counted) {
      // The gate was at its limit under its lock. Its wait comes from the snapshot, which may predate the failure
      // that locked it: the next statement sees that failure.
      const wait = Number(row.wait);
      if (wait > 0 || attempt === CHECK_RETRIES) return { client, outcome: "refused", wait: Math.max(wait, 1) };
      continue;
    }
    if (row.ok && client) return { client, outcome: "authenticated" };
    const reached = (failures: unknown, limit: number) => failures != null && Number(failures) === limit;
    const lockout = reached(row.gate_failures, Number(row.gate_limit)) || reached(row.address_failures, unknown?.limit ?? 0);
    return { client, outcome: "failed", lockout };
  }
}

/**
 * The answer `row` (the client as last read) gives with no failures at the gate, when that is an authentication that
 * writes nothing; otherwise none, and the attempt reads. The issuance re-checks the row and the gate (tokens.ts).
 */
function answerFromMemory(row: TokenClient | undefined, attempt: ClientAttempt, times: CounterTimes): ClientCheck | undefined {
  if (!row) return undefined;
  const { result, writes } = decideClientCheck(row, { gate: undefined, address: () => undefined }, attempt, times);
  if (result.outcome !== "authenticated" || writes.size > 0) return undefined;
  const gate = attempt.keys.registered ? storableKey(attempt.keys.registered.key) : null;
  return { outcome: "authenticated", client: { ...row, remembered: { gate } } };
}

/** The decision on a plain read of the client and its gate (CLIENT_AND_GATE), and what it would write. */
async function readClientCheck(pg: PgClient, attempt: ClientAttempt, times: CounterTimes): Promise<Decided<ClientCheck>> {
  const { registered, unknown } = attempt.keys;
  const stored = (key: CounterKey | undefined) => key ? storable([key])[0]!.key : null;
  const [row] = await pg.query(CLIENT_AND_GATE, [attempt.clientId, stored(registered), stored(unknown)]);
  if (!row) throw new Error("authenticateClient: the read returned no row");
  const client = row.id == null ? undefined : toTokenClient(row);
  const gate = row.failures == null ? undefined : toCounterRow(row);
  // Whether the decision writes is all this read needs to know, so the address's counter goes unread.
  return decideClientCheck(client, { gate, address: () => undefined }, attempt, times);
}
