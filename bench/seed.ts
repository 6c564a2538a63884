// Benchmark databases: a fresh file with the clients, user and fields every scenario needs, a pool of refresh
// tokens with known plaintexts, and for the big variant 1,000,000 tokens and 100,000 fields inserted in bulk.
import { createHash, randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { openStore } from "../src/store/sqlite/store.ts";
import { hashPassword } from "../src/crypto/hash.ts";
import { cryptoRandom } from "../src/deps.ts";

export interface SeedOptions {
  /** Refresh tokens to mint for the rotation scenario (each request consumes one). */
  refreshPool: number;
  /** Fields in the benchmark user's organization (what the GraphQL scenarios read). */
  fields: number;
  /** Filler tokens for the big variant (0 for none). */
  fillerTokens: number;
  /** Filler fields for the big variant, spread over `fillerOrganizations` other organizations. */
  fillerFields: number;
  fillerOrganizations: number;
}

export interface SeededClient {
  clientId: string;
  clientSecret: string;
}

export interface Seeded {
  path: string;
  ccClient: SeededClient;
  authClient: SeededClient & { redirectUri: string };
  /** A resource server (clients add --resource-server), which introspects the other clients' tokens. */
  resourceServer: SeededClient;
  user: { username: string; password: string };
  /** Plaintext refresh tokens of `authClient`, each live and unused. */
  refreshTokens: string[];
  timings: Record<string, number>;
}

const SCOPE = "fields:read";
const REDIRECT_URI = "https://client.example/cb";
const DAY = 86_400;

/** SHA-256 hex of a UTF-8 string: the same digest the store keeps for every credential. */
export function digestHex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function token(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** Creates and fills a database file at `path` (which must not exist yet). */
export async function seedDatabase(path: string, options: SeedOptions): Promise<Seeded> {
  const timings: Record<string, number> = {};
  const mark = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since));
  let t = performance.now();
  const now = Math.floor(Date.now() / 1000);
  const store = openStore(path, { now: now * 1000 });
  const org = await store.organizations.ensure("bench", { name: "Bench Farms", now });
  const robot = await store.users.insert({ username: "robot@bench.example", kind: "integration", now });
  await store.organizations.addMember(org.id, robot.id, { now });
  const password = "correct horse battery staple";
  const passwordHash = await hashPassword(password, { iterations: 1_000, random: cryptoRandom });
  const person = await store.users.insert({ username: "grower@bench.example", kind: "person", passwordHash, now });
  await store.organizations.addMember(org.id, person.id, { now });
  const ccClient = { clientId: "bench-cc", clientSecret: token("fgcs_") };
  const cc = await store.clients.insert({
    clientId: ccClient.clientId, secretHash: digestHex(ccClient.clientSecret), name: "Bench sync",
    grantType: "client_credentials", redirectUris: [], scope: SCOPE, integrationUserId: robot.id, now,
  });
  const authClient = { clientId: "bench-app", clientSecret: token("fgcs_"), redirectUri: REDIRECT_URI };
  const app = await store.clients.insert({
    clientId: authClient.clientId, secretHash: digestHex(authClient.clientSecret), name: "Bench app",
    grantType: "authorization_code", redirectUris: [REDIRECT_URI], scope: SCOPE, integrationUserId: null, now,
  });
  const resourceServer = { clientId: "bench-rs", clientSecret: token("fgcs_") };
  await store.clients.insert({
    clientId: resourceServer.clientId, secretHash: digestHex(resourceServer.clientSecret), name: "Bench API",
    grantType: null, redirectUris: [], scope: "", integrationUserId: null, now,
  });
  await store.fields.insertMany(org.id, makeFields(options.fields, 0), { now });
  await store.close();
  mark("base", t);

  const db = new DatabaseSync(path);
  // Bulk loading in one transaction without WAL or fsyncs (nobody else has the file open yet); WAL is restored at the
  // end and the server opens the file with its own settings.
  db.exec("PRAGMA journal_mode = MEMORY");
  db.exec("PRAGMA synchronous = OFF");
  db.exec("PRAGMA cache_size = -262144");
  t = performance.now();
  db.exec("BEGIN");
  if (options.fillerTokens > 0) insertFillerTokens(db, { clientId: cc.id, userId: robot.id, now, count: options.fillerTokens });
  mark("filler_tokens", t);
  t = performance.now();
  if (options.fillerFields > 0) insertFillerFields(db, options.fillerFields, options.fillerOrganizations, now);
  mark("filler_fields", t);
  t = performance.now();
  const refreshTokens = insertRefreshPool(db, { clientId: app.id, userId: person.id, now, count: options.refreshPool });
  db.exec("COMMIT");
  mark("refresh_pool", t);
  t = performance.now();
  db.exec("ANALYZE");
  db.exec("PRAGMA journal_mode = WAL");
  db.close();
  mark("checkpoint", t);
  return {
    path,
    ccClient,
    authClient,
    resourceServer,
    user: { username: person.username, password },
    refreshTokens,
    timings,
  };
}

/** One grant family per refresh token, so a failed request can never revoke the rest of the pool. */
function insertRefreshPool(db: DatabaseSync, o: { clientId: number; userId: number; now: number; count: number }): string[] {
  const family = db.prepare("INSERT INTO grant_families (id, client_id, user_id, scope, created_at) VALUES (?, ?, ?, ?, ?)");
  const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope,
    issued_at, expires_at) VALUES (?, 'refresh', 'authorization_code', ?, ?, ?, ?, ?, ?)`);
  const plaintexts: string[] = new Array(o.count);
  for (let i = 0; i < o.count; i++) {
    const plaintext = token("fgrt_");
    const familyId = `bench-family-${i}`;
    family.run(familyId, o.clientId, o.userId, SCOPE, o.now);
    insert.run(digestHex(plaintext), familyId, o.clientId, o.userId, SCOPE, o.now, o.now + 30 * DAY);
    plaintexts[i] = plaintext;
  }
  return plaintexts;
}

/**
 * Client-credentials access tokens of the benchmark client issued over the last two hours (most expired), made by
 * one INSERT … SELECT inside SQLite. Their plaintexts are never needed, so each digest is 64 hex characters whose
 * first 8 rise evenly across the whole key space and whose rest is random: the unique index is filled in order
 * (fast) yet new random digests from the server land between them exactly as they would among real ones.
 */
function insertFillerTokens(db: DatabaseSync, o: { clientId: number; userId: number; now: number; count: number }): void {
  db.prepare(`WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < :count)
    INSERT INTO tokens (token_hash, kind, grant_type, family_id, client_id, user_id, scope, issued_at, expires_at)
    SELECT printf('%08x', (i * 4294967296) / :count) || lower(hex(randomblob(28))), 'access', 'client_credentials',
      NULL, :client, :user, :scope, :now - 7200 + (i * 7200) / :count, :now - 7200 + (i * 7200) / :count + 1800
    FROM seq`).run({ count: o.count, client: o.clientId, user: o.userId, scope: SCOPE, now: o.now });
}

function insertFillerFields(db: DatabaseSync, count: number, organizations: number, now: number): void {
  const org = db.prepare("INSERT INTO organizations (slug, name, created_at) VALUES (?, ?, ?) RETURNING id");
  const insert = db.prepare(`INSERT INTO fields (organization_id, name, area_ha, crop, season, boundary, centroid_lon,
    centroid_lat, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const perOrg = Math.ceil(count / organizations);
  let made = 0;
  for (let o = 0; o < organizations && made < count; o++) {
    const id = Number((org.get(`filler-${o}`, `Filler ${o}`, now) as { id: number }).id);
    for (const f of makeFields(Math.min(perOrg, count - made), o + 1)) {
      insert.run(id, f.name, f.areaHa, f.crop, f.season, f.boundary, f.centroid.lon, f.centroid.lat, now, now);
    }
    made += Math.min(perOrg, count - made);
  }
}

const CROPS = ["wheat", "barley", "maize", "rapeseed", "sugar beet"];

/** Fields with a 32-vertex roughly circular boundary, about the size of a real field outline. */
export function makeFields(count: number, salt: number) {
  return Array.from({ length: count }, (_, i) => {
    const lon = 5 + (i % 100) * 0.01 + salt * 0.001;
    const lat = 52 + Math.floor(i / 100) * 0.01;
    const ring: [number, number][] = [];
    for (let k = 0; k < 32; k++) {
      const a = (k / 32) * 2 * Math.PI;
      ring.push([round6(lon + 0.003 * Math.cos(a)), round6(lat + 0.002 * Math.sin(a))]);
    }
    ring.push(ring[0]!);
    return {
      name: `Field ${i + 1}`,
      areaHa: 12 + (i % 30),
      crop: CROPS[i % CROPS.length]!,
      season: "2026",
      boundary: JSON.stringify({ type: "Polygon", coordinates: [ring] }),
      centroid: { lon, lat },
    };
  });
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
