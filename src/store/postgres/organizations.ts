// organizations and memberships tables on PostgreSQL.
import type { MappedRow, Organization, OrganizationStore } from "../contract.ts";
import { toOrganization } from "../rows.ts";
import type { PgClient, PgQueryable } from "./connect.ts";

const organizationOf = (row: unknown): Organization => toOrganization(row as MappedRow);

/**
 * The organization `slug`, created (named `name`) unless it exists; `created` is true when this call inserted it.
 * Two statements, not one: a single INSERT … ON CONFLICT DO NOTHING with a SELECT beside it reads the statement's
 * snapshot, which misses a row another transaction committed while the insert waited for it.
 */
export async function ensurePgOrganizationRow(
  q: PgQueryable,
  organization: { slug: string; name: string; now: number },
): Promise<{ organization: Organization; created: boolean }> {
  const { slug, name, now } = organization;
  const [inserted] = await q.query(
    "INSERT INTO organizations (slug, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (slug) DO NOTHING RETURNING *",
    [slug, name, now],
  );
  if (inserted) return { organization: organizationOf(inserted), created: true };
  const [existing] = await q.query("SELECT * FROM organizations WHERE slug = $1", [slug]);
  return { organization: organizationOf(existing), created: false };
}

/** Adds the membership unless it exists; false when it already existed. */
export async function addPgMembershipRow(
  q: PgQueryable,
  membership: { organizationId: number; userId: number; role: string; now: number },
): Promise<boolean> {
  const { organizationId, userId, role, now } = membership;
  const rows = await q.query(
    `INSERT INTO memberships (user_id, organization_id, role, created_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (user_id, organization_id) DO NOTHING RETURNING 1 AS added`,
    [userId, organizationId, role, now],
  );
  return rows.length === 1;
}

export function createPgOrganizationStore(pg: PgClient): OrganizationStore {
  const one = async (text: string, value: number | string) => {
    const [row] = await pg.query(text, [value]);
    return row && organizationOf(row);
  };
  return {
    findById: (id) => one("SELECT * FROM organizations WHERE id = $1", id),
    findBySlug: (slug) => one("SELECT * FROM organizations WHERE slug = $1", slug),
    async ensure(slug, { name, now }) {
      // Read first: the organization exists on every call but the first, and then nothing is written.
      return await one("SELECT * FROM organizations WHERE slug = $1", slug) ??
        (await ensurePgOrganizationRow(pg, { slug, name: name ?? slug, now })).organization;
    },
    async list() {
      return (await pg.query("SELECT * FROM organizations ORDER BY id")).map(organizationOf);
    },
    async listForUser(userId) {
      const rows = await pg.query(
        `SELECT o.* FROM organizations o JOIN memberships m ON m.organization_id = o.id
        WHERE m.user_id = $1 ORDER BY o.id`,
        [userId],
      );
      return rows.map(organizationOf);
    },
    async listByIds(ids) {
      // One JSON array parameter, as on SQLite: no array type to bind, and any number of ids in one fixed text.
      const rows = await pg.query(
        "SELECT * FROM organizations WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::text::jsonb)) ORDER BY id",
        [JSON.stringify(ids)],
      );
      return rows.map(organizationOf);
    },
    async idsForUser(userId) {
      const rows = await pg.query<{ organization_id: number }>(
        "SELECT organization_id FROM memberships WHERE user_id = $1 ORDER BY organization_id",
        [userId],
      );
      return rows.map((row) => row.organization_id);
    },
    async addMember(organizationId, userId, { role = "member", now }) {
      await addPgMembershipRow(pg, { organizationId, userId, role, now });
    },
    join(userId, slug, now) {
      return pg.transaction(async (tx) => {
        const { organization, created } = await ensurePgOrganizationRow(tx, { slug, name: slug, now });
        const joined = await addPgMembershipRow(tx, { organizationId: organization.id, userId, role: "member", now });
        return { organization, joined, created };
      });
    },
    async removeMember(organizationId, userId) {
      const rows = await pg.query(
        "DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2 RETURNING 1 AS removed",
        [organizationId, userId],
      );
      return rows.length === 1;
    },
  };
}
