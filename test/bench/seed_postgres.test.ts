// The benchmark's PostgreSQL database holds exactly the seeded SQLite rows, and the servers' own inserts fit after them.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { copyToPostgres } from "../../bench/seed_postgres.ts";
import { seedDatabase } from "../../bench/seed.ts";
import { openPostgres } from "../../src/store/postgres/connect.ts";
import { postgresTest } from "../helpers/postgres.ts";

const TABLES = ["organizations", "users", "memberships", "clients", "grant_families", "tokens", "fields", "field_counts"];

postgresTest("the copy has every seeded row, field counts rebuilt by the trigger, and identities past the copied ids", async (db) => {
  const path = join(mkdtempSync(join(tmpdir(), "fieldgate-bench-seed-")), "seed.db");
  const seeded = await seedDatabase(path, { refreshPool: 7, fields: 12, fillerTokens: 0, fillerFields: 0, fillerOrganizations: 0 });
  const sqlite = new DatabaseSync(path, { readOnly: true });
  const want = Object.fromEntries(TABLES.map((t) => [t, Number((sqlite.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n)]));
  const counts = sqlite.prepare("SELECT organization_id, crop, season, n FROM field_counts ORDER BY 1, 2, 3").all();
  sqlite.close();
  await copyToPostgres(path, db.url);
  const pg = await openPostgres(db.url, { max: 1 });
  try {
    const got: Record<string, number> = {};
    for (const t of TABLES) got[t] = (await pg.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`))[0]!.n;
    assert.deepEqual(got, want);
    assert.equal(want.tokens, seeded.refreshTokens.length);
    assert.deepEqual(
      (await pg.query("SELECT organization_id, crop, season, n FROM field_counts ORDER BY 1, 2, 3")).map((r) => ({ ...r })),
      counts.map((r) => ({ ...r })),
    );
    const [org] = await pg.query<{ id: number }>(
      "INSERT INTO organizations (slug, name, created_at) VALUES ('later', 'Later', 0) RETURNING id",
    );
    assert.equal(org!.id, want.organizations! + 1);
  } finally {
    await pg.close();
  }
});
