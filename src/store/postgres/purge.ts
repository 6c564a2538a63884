// Purge on PostgreSQL: SQLite's deletions, in short batches, by one instance at a time.
import type { PurgeCounts, Retention } from "../contract.ts";
import type { PgClient, PgValue } from "./connect.ts";

/** The advisory lock key of purge: 0x66677075, "fgpu" in ASCII, beside the migrations' "fgmi". */
export const PURGE_LOCK_KEY = 1_718_055_029;

/** Rows one statement deletes: each batch commits on its own, so no transaction holds row locks for long. */
export const PURGE_BATCH_ROWS = 10_000;

/**
 * One batch per table: `$1` the cutoff, `$2` the batch size, `$3` now where used. Victims are picked by the expiry
 * indexes, locked with SKIP LOCKED (a row a request is writing is left for the next run instead of waited for), and
 * the count comes back with the delete.
 */
const BATCHES: ReadonlyArray<[keyof PurgeCounts, string]> = [
  // A used code stays while its family has a live token: a later replay must still find it and revoke the family
  // (RFC 6749 §4.1.2) instead of reporting it missing.
  ["codes", `DELETE FROM authorization_codes WHERE id IN (SELECT id FROM authorization_codes c WHERE expires_at < $1
    AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.family_id = c.family_id AND t.expires_at >= $3)
    LIMIT $2 FOR UPDATE SKIP LOCKED)`],
  ["tokens", "DELETE FROM tokens WHERE id IN (SELECT id FROM tokens WHERE expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)"],
  ["sessions", "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)"],
  // A family is dead once no token or code refers to it any more.
  ["families", `DELETE FROM grant_families WHERE id IN (SELECT id FROM grant_families f WHERE created_at < $1
    AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.family_id = f.id)
    AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.family_id = f.id)
    LIMIT $2 FOR UPDATE SKIP LOCKED)`],
  ["auditEvents", "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)"],
  ["demoStates", `DELETE FROM demo_states WHERE key_hash IN (SELECT key_hash FROM demo_states WHERE expires_at < $1
    LIMIT $2 FOR UPDATE SKIP LOCKED)`],
  ["dpopProofs", `DELETE FROM dpop_proofs WHERE key_hash IN (SELECT key_hash FROM dpop_proofs WHERE expires_at < $1
    LIMIT $2 FOR UPDATE SKIP LOCKED)`],
];

/**
 * Deletes what SQLite's purge deletes, in batches of `batchRows`, each its own transaction under a transaction-level
 * advisory lock taken without waiting. While one instance's batch runs, another instance's purge finds the lock
 * taken and returns at once with what it has deleted so far (zeros, at its start); the instance whose lock was
 * taken between two of its batches stops the same way, and the other one carries on. So two instances never
 * delete at the same time. A session-level lock held across the batches would need every batch on one server
 * connection, which PgBouncer in transaction mode does not keep: the lock would stay behind on a connection nobody
 * unlocks.
 */
export async function purgePostgres(
  pg: PgClient,
  now: number,
  { retentionSeconds, auditRetentionSeconds }: Retention,
  { batchRows = PURGE_BATCH_ROWS }: { batchRows?: number } = {},
): Promise<PurgeCounts> {
  const counts: PurgeCounts = { codes: 0, tokens: 0, sessions: 0, families: 0, auditEvents: 0, demoStates: 0, dpopProofs: 0 };
  for (const [table, text] of BATCHES) {
    // The audit trail outlives the credentials it describes: it is reviewed weeks later. A seen DPoP proof is useless
    // once its window is over.
    const cutoff = now - (table === "auditEvents" ? auditRetentionSeconds : table === "dpopProofs" ? 0 : retentionSeconds);
    const params: PgValue[] = text.includes("$3") ? [cutoff, batchRows, now] : [cutoff, batchRows];
    for (;;) {
      const deleted = await deleteBatch(pg, text, params);
      if (deleted === undefined) return counts;
      counts[table] += deleted;
      if (deleted < batchRows) break;
    }
  }
  return counts;
}

/** One batch under the purge lock: the rows it deleted, or undefined when another instance holds the lock. */
function deleteBatch(pg: PgClient, text: string, params: readonly PgValue[]): Promise<number | undefined> {
  return pg.transaction(async (tx) => {
    const [lock] = await tx.query<{ held: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS held", [PURGE_LOCK_KEY]);
    if (!lock!.held) return undefined;
    const [row] = await tx.query<{ n: number }>(`WITH deleted AS (${text} RETURNING 1) SELECT COUNT(*) AS n FROM deleted`, params);
    return row!.n;
  });
}
