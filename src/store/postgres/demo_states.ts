// demo_states table on PostgreSQL: the demo client's per-browser state, stored by the digest of the demo cookie, sealed.
import type { DemoStateStore } from "../contract.ts";
import type { PgClient } from "./connect.ts";

export function createPgDemoStateStore(pg: PgClient): DemoStateStore {
  return {
    async find(keyHash, now) {
      const [row] = await pg.query<{ sealed: string }>(
        "SELECT sealed FROM demo_states WHERE key_hash = $1 AND expires_at > $2",
        [keyHash, now],
      );
      return row?.sealed;
    },
    async save(row, { keep }) {
      await pg.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO demo_states (key_hash, sealed, expires_at) VALUES ($1, $2, $3)
          ON CONFLICT (key_hash) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at`,
          [row.keyHash, row.sealed, row.expiresAt],
        );
        // Expired rows sort last and go first; the row just saved is never the one evicted. A row another save is
        // writing or evicting right now is skipped rather than waited for: two saves evicting each other's rows in
        // opposite orders would deadlock, and the next save evicts whatever this one left.
        await tx.query(
          `DELETE FROM demo_states WHERE key_hash IN (SELECT key_hash FROM demo_states WHERE key_hash IN
            (SELECT key_hash FROM demo_states WHERE key_hash <> $1 ORDER BY expires_at DESC OFFSET $2)
          FOR UPDATE SKIP LOCKED)`,
          [row.keyHash, keep],
        );
      });
    },
    async delete(keyHash) {
      await pg.query("DELETE FROM demo_states WHERE key_hash = $1", [keyHash]);
    },
  };
}
