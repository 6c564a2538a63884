// server_secrets table on PostgreSQL: per-deployment secrets shared by every instance, each created once on first use.
import type { SecretStore } from "../contract.ts";
import type { PgClient } from "./connect.ts";

export function createPgSecretStore(pg: PgClient): SecretStore {
  const find = async (name: string): Promise<string | undefined> => {
    const [row] = await pg.query<{ value: string }>("SELECT value FROM server_secrets WHERE name = $1", [name]);
    return row?.value;
  };
  return {
    async ensure(name, candidate, now) {
      // Read first: once the secret exists, which is every start but the first, opening needs no write.
      const existing = await find(name);
      if (existing !== undefined) return existing;
      const [inserted] = await pg.query<{ value: string }>(
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING value",
        [name, candidate, now],
      );
      // Nothing returned: another instance's insert won (DO NOTHING waited for it to commit), and this new
      // statement's snapshot sees its row.
      return inserted?.value ?? (await find(name))!;
    },
  };
}
