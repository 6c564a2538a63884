// organizations and memberships tables.
import type { Db, Row } from "./database.ts";
import type { OrganizationStore } from "../contract.ts";
import { toOrganization } from "../rows.ts";

/** Creates the organization `slug` unless it exists, inside the caller's transaction; returns its id. */
export function ensureOrganizationRow(db: Db, organization: { slug: string; name: string; now: number }): number {
  const { slug, name, now } = organization;
  db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, ?) ON CONFLICT(slug) DO NOTHING")
    .run(slug, name, now);
  return Number(db.prepare("SELECT id FROM organizations WHERE slug = ?").get(slug)!.id);
}

/** Adds the membership unless it exists, inside the caller's transaction; false when it already existed. */
export function addMembershipRow(
  db: Db,
  membership: { organizationId: number; userId: number; role: string; now: number },
): boolean {
  const { organizationId, userId, role, now } = membership;
  return Number(db.prepare(`INSERT INTO memberships (user_id, organization_id, role, created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT(user_id, organization_id) DO NOTHING`).run(userId, organizationId, role, now).changes) === 1;
}

export function createOrganizationStore(db: Db): OrganizationStore {
  const byId = (id: number) => db.prepare("SELECT * FROM organizations WHERE id = ?").get(id) as Row | undefined;
  const bySlug = (slug: string) => db.prepare("SELECT * FROM organizations WHERE slug = ?").get(slug) as Row | undefined;
  return {
    async findById(id) {
      const row = byId(id);
      return row && toOrganization(row);
    },
    async findBySlug(slug) {
      const row = bySlug(slug);
      return row && toOrganization(row);
    },
    async ensure(slug, { name, now }) {
      return db.transaction(() => toOrganization(byId(ensureOrganizationRow(db, { slug, name: name ?? slug, now }))!));
    },
    async list() {
      return (db.prepare("SELECT * FROM organizations ORDER BY id").all() as Row[]).map(toOrganization);
    },
    async listForUser(userId) {
      const rows = db.prepare(`SELECT o.* FROM organizations o JOIN memberships m ON m.organization_id = o.id
        WHERE m.user_id = ? ORDER BY o.id`).all(userId) as Row[];
      return rows.map(toOrganization);
    },
    async listByIds(ids) {
      // One JSON array parameter, as the fields queries take their organization scope.
      const rows = db.prepare("SELECT * FROM organizations WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id")
        .all(JSON.stringify(ids)) as Row[];
      return rows.map(toOrganization);
    },
    async idsForUser(userId) {
      const rows = db.prepare("SELECT organization_id FROM memberships WHERE user_id = ? ORDER BY organization_id")
        .all(userId) as Row[];
      return rows.map((row) => Number(row.organization_id));
    },
    async addMember(organizationId, userId, { role = "member", now }) {
      addMembershipRow(db, { organizationId, userId, role, now });
    },
    async join(userId, slug, now) {
      return db.transaction(() => {
        const created = bySlug(slug) === undefined;
        const organizationId = ensureOrganizationRow(db, { slug, name: slug, now });
        const joined = addMembershipRow(db, { organizationId, userId, role: "member", now });
        return { organization: toOrganization(byId(organizationId)!), joined, created };
      });
    },
    async removeMember(organizationId, userId) {
      return db.transaction(() =>
        Number(db.prepare("DELETE FROM memberships WHERE organization_id = ? AND user_id = ?").run(organizationId, userId).changes) === 1
      );
    },
  };
}
