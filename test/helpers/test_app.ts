// buildTestApp: an app over an in-memory database, a fake clock, seeded randomness and a captured log.
import { createApp, type App } from "../../src/app.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import type { Client, ClientGrantType, Organization, Store, User } from "../../src/store/contract.ts";
import type { Digest } from "../../src/deps.ts";
import { hashPassword, sha256Hex } from "../../src/crypto/hash.ts";
import { randomId, randomToken } from "../../src/crypto/random.ts";
import { fakeClock, seededRandom, type FakeClock } from "./fake_clock.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { createTestDatabase, requirePostgres } from "./postgres.ts";
import process from "node:process";

export interface LogLine {
  event: string;
  fields: Record<string, unknown>;
}

export interface SeededClient {
  client: Client;
  clientId: string;
  clientSecret: string;
}

export interface TestApp {
  app: App;
  store: Store;
  config: Readonly<Config>;
  clock: FakeClock;
  /** Every log event the app emitted, in order. */
  log: LogLine[];
  seed: Seeder;
}

export interface Seeder {
  organization(slug?: string): Promise<Organization>;
  /** A platform user who can sign in with `password`, member of `org` (default "acme"). */
  user(options?: { username?: string; password?: string; org?: string }): Promise<User & { password: string }>;
  integrationUser(options?: { username?: string; org?: string }): Promise<User>;
  /** An authorization-code client (redirect https://client.example/cb), a client-credentials client or a resource server. */
  client(options?: {
    /** null: a resource server, which has no grant. */
    grant?: ClientGrantType | null;
    redirectUri?: string;
    /** Several registered redirect URIs; overrides redirectUri. */
    redirectUris?: string[];
    scope?: string;
    integrationUsername?: string;
    org?: string;
    name?: string;
  }): Promise<SeededClient>;
  /** `count` square fields in organization `org`, named "Field 1"… */
  fields(count: number, options?: { org?: string; crop?: string; season?: string }): Promise<void>;
}

/** Environment used by tests: fast PBKDF2 so sign-in tests do not take 140 ms each. */
export const TEST_ENV: Record<string, string> = {
  FIELDGATE_DB: ":memory:",
  FIELDGATE_BASE_URL: "http://fieldgate.test",
  FIELDGATE_PBKDF2_ITERATIONS: "1000",
};

/** How an app instance differs beyond what its settings say. */
export interface InstanceOptions {
  /** The digest the app checks secrets with (sha256Hex by default); tests wrap it to count checks. */
  digest?: Digest;
}

/**
 * Builds a fresh app; `env` overrides settings, e.g. { FIELDGATE_REFRESH_GRACE: "5" }. The database is in memory
 * unless FIELDGATE_DB names a file (then close `store` when done).
 */
export function buildTestApp(env: Record<string, string> = {}, options: InstanceOptions = {}): TestApp {
  const config = loadConfig({ ...TEST_ENV, ...env });
  const clock = fakeClock();
  return assemble(config, clock, openStore(config.dbPath, { now: clock.clock() }), options);
}

/**
 * buildTestApp on the backend the run asks for: with FIELDGATE_TEST_STORE=postgres each app gets a fresh PostgreSQL
 * database (test/helpers/postgres.ts; no PostgreSQL is a failure then), so the HTTP and flow suites run unchanged on
 * both stores. Tests that need a SQLite file (FIELDGATE_DB) or SQLite maintenance get SQLite either way.
 */
export async function openTestApp(env: Record<string, string> = {}, options: InstanceOptions = {}): Promise<TestApp> {
  if (testBackend() !== "postgres" || env.FIELDGATE_DB !== undefined) return buildTestApp(env, options);
  return await openTestAppOn((await createTestDatabase(requirePostgres(), { migrated: true })).url, env, options);
}

/** A test app on the PostgreSQL database at `url`, as openTestApp makes one (close its store when done). */
export async function openTestAppOn(url: string, env: Record<string, string> = {}, options: InstanceOptions = {}): Promise<TestApp> {
  const config = loadConfig({ ...TEST_ENV, ...env });
  const clock = fakeClock();
  // Idle connections close after a second, so a test file's process exits without each test closing its app.
  const store = await openPostgresStore(url, { now: clock.clock(), max: 4, idleTimeoutSeconds: 1 });
  return assemble(config, clock, store, options);
}

/** The store backend the HTTP and flow suites run on: FIELDGATE_TEST_STORE, sqlite by default. */
export function testBackend(): "sqlite" | "postgres" {
  return process.env.FIELDGATE_TEST_STORE === "postgres" ? "postgres" : "sqlite";
}

function assemble(config: Readonly<Config>, clock: FakeClock, store: Store, options: InstanceOptions): TestApp {
  const random = seededRandom(Math.floor(Math.random() * 2 ** 31) + 1);
  const log: LogLine[] = [];
  const app = createApp({
    config,
    store,
    clock: clock.clock,
    random,
    log: (event, fields = {}) => log.push({ event, fields }),
    digest: options.digest,
  });
  const now = () => clock.nowSeconds();
  let counter = 0;

  const seed: Seeder = {
    async organization(slug = "acme") {
      return store.organizations.ensure(slug, { name: slug.toUpperCase(), now: now() });
    },
    async user({ username = `user${++counter}@example.com`, password = "correct horse battery", org = "acme" } = {}) {
      const organization = await seed.organization(org);
      const passwordHash = await hashPassword(password, { iterations: config.pbkdf2Iterations, random });
      const user = await store.users.insert({ username, kind: "person", passwordHash, now: now() });
      await store.organizations.addMember(organization.id, user.id, { now: now() });
      return { ...user, password };
    },
    async integrationUser({ username = `robot${++counter}@example.com`, org = "acme" } = {}) {
      const organization = await seed.organization(org);
      const user = await store.users.insert({ username, kind: "integration", now: now() });
      await store.organizations.addMember(organization.id, user.id, { now: now() });
      return user;
    },
    async client(options = {}) {
      const grant = options.grant === undefined ? "authorization_code" : options.grant;
      const clientSecret = randomToken(random, "clientSecret");
      let integrationUserId: number | null = null;
      if (grant === "client_credentials") {
        const existing = options.integrationUsername
          ? await store.users.findByUsername(options.integrationUsername)
          : undefined;
        integrationUserId = (existing ?? await seed.integrationUser({ org: options.org })).id;
      }
      const client = await store.clients.insert({
        clientId: randomId(random),
        secretHash: await sha256Hex(clientSecret),
        name: options.name ?? (grant === "client_credentials" ? "Nightly sync" : grant === null ? "Orders API" : "Field notes app"),
        grantType: grant,
        redirectUris: grant === "authorization_code" ? options.redirectUris ?? [options.redirectUri ?? "https://client.example/cb"] : [],
        scope: options.scope ?? (grant === null ? "" : "fields:read"),
        integrationUserId,
        now: now(),
      });
      return { client, clientId: client.clientId, clientSecret };
    },
    async fields(count, { org = "acme", crop = "wheat", season = "2026" } = {}) {
      const organization = await seed.organization(org);
      const fields = Array.from({ length: count }, (_, i) => {
        const x = 5 + i * 0.01;
        const ring = [[x, 52], [x + 0.005, 52], [x + 0.005, 52.005], [x, 52.005], [x, 52]];
        return {
          name: `Field ${i + 1}`,
          areaHa: 19.2,
          crop,
          season,
          boundary: JSON.stringify({ type: "Polygon", coordinates: [ring] }),
          centroid: { lon: x + 0.0025, lat: 52.0025 },
        };
      });
      await store.fields.insertMany(organization.id, fields, { now: now() });
    },
  };

  return { app, store, config, clock, log, seed };
}

/**
 * Another app instance beside `t`'s, as another --workers process or another server would be: same settings and
 * clock, over `store` (a connection of its own to the same database).
 */
export function anotherInstance(t: TestApp, store: Store, options: InstanceOptions = {}): App {
  return createApp({
    config: t.config,
    store,
    clock: t.clock.clock,
    random: seededRandom(Math.floor(Math.random() * 2 ** 31) + 1),
    log: (event, fields = {}) => t.log.push({ event, fields }),
    digest: options.digest,
  });
}
