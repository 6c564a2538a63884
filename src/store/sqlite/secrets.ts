// server_secrets table: per-deployment secrets shared by every worker and restart, each created once on first use.
import type { Db } from "./database.ts";
import type { SecretStore } from "../contract.ts";

export function createSecretStore(db: Db): SecretStore {
  const find = (name: string): string | undefined => {
    const row = db.prepare("SELECT value FROM server_secrets WHERE name = ?").get(name);
    return row === undefined ? undefined : String(row.value);
  };
  return {
    async ensure(name, candidate, now) {
      // Read first: once the secret exists, which is every start but the first, opening needs no write.
      return find(name) ?? db.transactionBatched(() => {
        db.prepare("INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING")
          .run(name, candidate, now);
        return find(name)!;
      });
    },
  };
}
