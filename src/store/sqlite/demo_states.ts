// demo_states table: the demo client's per-browser state, stored by the digest of the demo cookie, already sealed.
import type { Db } from "./database.ts";

export interface DemoStateRow {
  /** SHA-256 hex of the demo cookie value. */
  keyHash: string;
  /** The state, sealed by the caller; the store never sees it in the clear. */
  sealed: string;
  expiresAt: number;
}

export interface DemoStateStore {
  /** The sealed state saved under `keyHash`, unless it has expired. */
  find(keyHash: string, now: number): Promise<string | undefined>;
  /**
   * Saves or replaces the row, then deletes all but the `keep` other rows that expire last, in one transaction:
   * anyone can start a demo without signing in, so the table must stay bounded, as the in-memory map was.
   */
  save(row: DemoStateRow, options: { keep: number }): Promise<void>;
  /** Deletes the row saved under `keyHash`, if any. */
  delete(keyHash: string): Promise<void>;
}

export function createDemoStateStore(db: Db): DemoStateStore {
  return {
    async find(keyHash, now) {
      const row = db.prepare("SELECT sealed FROM demo_states WHERE key_hash = ? AND expires_at > ?").get(keyHash, now);
      return row === undefined ? undefined : String(row.sealed);
    },
    async save(row, { keep }) {
      await db.transactionBatched(() => {
        db.prepare(`INSERT INTO demo_states (key_hash, sealed, expires_at) VALUES (?, ?, ?)
          ON CONFLICT (key_hash) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at`)
          .run(row.keyHash, row.sealed, row.expiresAt);
        // Expired rows sort last and go first; the row just saved is never the one evicted.
        db.prepare(`DELETE FROM demo_states WHERE key_hash IN
          (SELECT key_hash FROM demo_states WHERE key_hash <> ? ORDER BY expires_at DESC LIMIT -1 OFFSET ?)`)
          .run(row.keyHash, keep);
      });
    },
    async delete(keyHash) {
      await db.transactionBatched(() => db.prepare("DELETE FROM demo_states WHERE key_hash = ?").run(keyHash));
    },
  };
}
