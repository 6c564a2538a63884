// demo_states table: the demo client's per-browser state, stored by the digest of the demo cookie, already sealed.
import type { Db } from "./database.ts";
import type { DemoStateStore } from "../contract.ts";

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
