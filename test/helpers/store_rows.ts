/**
 * Rows the client, code and token contract tests stand on, in tables other store modules own (users, organizations,
 * memberships, sessions, consents, audit events), and `rowsTest`, storeTest with them at hand. On SQLite they go
 * through the Store; on PostgreSQL through SQL of their own, so these tests depend on the modules they test only.
 * TODO(issue 24): write them through the Store on PostgreSQL too once its user, organization, session, consent and
 * audit modules are in.
 */
import type { TestContext } from "node:test";
import type { AuditEvent, Client, ClientAttempt, Store, UserKind } from "../../src/store/contract.ts";
import { openPostgres, type PgQueryable } from "../../src/store/postgres/connect.ts";
import { type Backend, storeTest, type StoreTestContext } from "./stores.ts";

export interface StoreRows {
  /** A new user (a person unless `kind` says otherwise); returns its id. */
  user(options?: { username?: string; kind?: UserKind }): Promise<number>;
  setUserDisabled(id: number, disabled: boolean): Promise<void>;
  /** Makes the user a member of the organization `slug`, creating it if needed; returns the organization's id. */
  member(userId: number, slug: string): Promise<number>;
  session(userId: number, sessionHash: string, expiresAt: number): Promise<void>;
  consent(userId: number, clientId: number, scope: string): Promise<void>;
  /** The scope of the user's stored consent to the client, or undefined. */
  consentScope(userId: number, clientId: number): Promise<string | undefined>;
  /** Every audit event, oldest first. */
  auditEvents(): Promise<AuditEvent[]>;
}

/** storeTest, with a StoreRows for the store under test; the SQL connection it may open is closed afterwards. */
export function rowsTest(
  name: string,
  fn: (store: Store, rows: StoreRows, t: TestContext & { backend: Backend }) => Promise<void>,
): void {
  storeTest(name, async (store, t: StoreTestContext) => {
    if (t.databaseUrl === undefined) return fn(store, storeRows(store), t);
    const pg = await openPostgres(t.databaseUrl, { max: 1 });
    try {
      await fn(store, sqlRows(pg), t);
    } finally {
      await pg.close();
    }
  });
}

/** Usernames unique within a test process. Test code: a counter is fine. */
let users = 0;
const nextUsername = () => `user${++users}@example.com`;

/** The rows through the Store's own operations. */
export function storeRows(store: Store): StoreRows {
  return {
    async user({ username = nextUsername(), kind = "person" } = {}) {
      return (await store.users.insert({ username, kind, now: 1 })).id;
    },
    async setUserDisabled(id, disabled) {
      await store.users.setDisabled(id, disabled);
    },
    async member(userId, slug) {
      const organization = await store.organizations.ensure(slug, { now: 1 });
      await store.organizations.addMember(organization.id, userId, { now: 1 });
      return organization.id;
    },
    async session(userId, sessionHash, expiresAt) {
      await store.sessions.insert({ sessionHash, userId, createdAt: 1, expiresAt });
    },
    async consent(userId, clientId, scope) {
      await store.consents.grant(userId, clientId, { scope, now: 1 });
    },
    async consentScope(userId, clientId) {
      return (await store.consents.find(userId, clientId))?.scope;
    },
    async auditEvents() {
      return store.audit.list({});
    },
  };
}

/** The rows in SQL, on a PostgreSQL database migrated to the current schema. */
export function sqlRows(pg: PgQueryable): StoreRows {
  return {
    async user({ username = nextUsername(), kind = "person" } = {}) {
      const [row] = await pg.query("INSERT INTO users (username, kind, created_at) VALUES ($1, $2, 1) RETURNING id", [username, kind]);
      return row!.id as number;
    },
    async setUserDisabled(id, disabled) {
      await pg.query("UPDATE users SET disabled = $1 WHERE id = $2", [disabled ? 1 : 0, id]);
    },
    async member(userId, slug) {
      await pg.query("INSERT INTO organizations (slug, name, created_at) VALUES ($1, $1, 1) ON CONFLICT (slug) DO NOTHING", [slug]);
      const [row] = await pg.query("SELECT id FROM organizations WHERE slug = $1", [slug]);
      await pg.query(`INSERT INTO memberships (user_id, organization_id, created_at) VALUES ($1, $2, 1)
        ON CONFLICT DO NOTHING`, [userId, row!.id as number]);
      return row!.id as number;
    },
    async session(userId, sessionHash, expiresAt) {
      await pg.query("INSERT INTO sessions (session_hash, user_id, created_at, expires_at) VALUES ($1, $2, 1, $3)",
        [sessionHash, userId, expiresAt]);
    },
    async consent(userId, clientId, scope) {
      await pg.query(`INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, 1)
        ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope`, [userId, clientId, scope]);
    },
    async consentScope(userId, clientId) {
      const [row] = await pg.query("SELECT scope FROM consents WHERE user_id = $1 AND client_id = $2", [userId, clientId]);
      return row && String(row.scope);
    },
    async auditEvents() {
      return (await pg.query("SELECT * FROM audit_events ORDER BY id")).map((row) => ({
        id: row.id as number,
        at: row.at as number,
        event: String(row.event),
        clientId: row.client_id as string | null,
        userId: row.user_id as number | null,
        ip: row.ip as string | null,
        detail: row.detail === null ? null : JSON.parse(String(row.detail)) as Record<string, unknown>,
      }));
    },
  };
}

/** An authorization-code client registered through the store, as `clients add` would. */
export function webClient(store: Store, clientId = "web", options: { scope?: string } = {}) {
  return store.clients.insert({
    clientId,
    secretHash: `h-${clientId}`,
    name: clientId,
    grantType: "authorization_code",
    redirectUris: [`https://${clientId}.example/cb`],
    scope: options.scope ?? "fields:read",
    integrationUserId: null,
    now: 1,
  });
}

/** A client-credentials client with a new integration user of its own. */
export async function robotClient(store: Store, rows: StoreRows, clientId = "robot") {
  const userId = await rows.user({ username: `${clientId}-${nextUsername()}`, kind: "integration" });
  return store.clients.insert({
    clientId,
    secretHash: `h-${clientId}`,
    name: clientId,
    grantType: "client_credentials",
    redirectUris: [],
    scope: "fields:read",
    integrationUserId: userId,
    now: 1,
  });
}

/** A digest-shaped random value: a token or code hash nobody else uses. */
export function randomHash(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Stores a code for the client and user as the authorize page would (no basis); returns its digest and family. */
export async function storeCode(
  store: Store,
  options: { client: { id: number; redirectUri: string | null; scope: string }; userId: number; now: number; familyId?: string },
): Promise<{ codeHash: string; familyId: string }> {
  const { client, userId, now } = options;
  const codeHash = randomHash();
  const familyId = options.familyId ?? randomHash().slice(0, 22);
  await store.codes.issue({
    codeHash,
    familyId,
    clientId: client.id,
    userId,
    redirectUri: client.redirectUri ?? "https://client.example/cb",
    scope: client.scope,
    codeChallenge: null,
    issuedAt: now,
    expiresAt: now + 600,
  });
  return { codeHash, familyId };
}

/** Authenticates `client` with its own secret digest, counting nothing: the TokenClient a grant's write is handed. */
export function uncounted(client: Pick<Client, "clientId" | "secretHash">): ClientAttempt {
  return { clientId: client.clientId, digest: client.secretHash, keys: { registered: undefined, unknown: undefined } };
}
