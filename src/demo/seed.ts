// Demo data for a fresh database: the "demo-farm" organization, its fields, a person, and two clients.
import type { DemoCredentials, Random } from "../deps.ts";
import { hashPassword } from "../crypto/hash.ts";
import { encodeBase64Url } from "../crypto/base64url.ts";
import { parseFieldCollection } from "../geo/geojson.ts";
import { createClient, createUser } from "../oauth/registration.ts";
import type { Store } from "../store/contract.ts";
import { demoRedirectUri } from "./redirect_uri.ts";

/** The checked-in demo boundaries, resolved next to the source so any working directory works. */
export const DEMO_FIELDS_URL = new URL("../../data/demo-fields.geojson", import.meta.url);

export const DEMO_ORG = "demo-farm";
export const DEMO_USERNAME = "demo";
export const DEMO_INTEGRATION_USERNAME = "demo-integration";
export const DEMO_SCOPE = "fields:read";

/** Everything the operator needs to try the demo; shown once and written only to a 0600 file. */
export interface DemoSeed {
  organization: string;
  username: string;
  password: string;
  fields: number;
  authorizationCodeClient: { client_id: string; client_secret: string; redirect_uri: string; scope: string };
  clientCredentialsClient: { client_id: string; client_secret: string; integration_user: string; scope: string };
}

/** The two demo clients: a confidential web app (authorization code) and a nightly sync (client credentials). */
async function createDemoClients(
  store: Store,
  options: { redirectUri: string; robotId: number; random: Random; now: number },
) {
  const { random, now } = options;
  const web = await createClient(store, {
    name: "Demo field notes app",
    grantType: "authorization_code",
    redirectUris: [options.redirectUri],
    scope: DEMO_SCOPE,
    integrationUserId: null,
  }, { random, now });
  const sync = await createClient(store, {
    name: "Demo nightly sync",
    grantType: "client_credentials",
    redirectUris: [],
    scope: DEMO_SCOPE,
    integrationUserId: options.robotId,
  }, { random, now });
  return { web, sync };
}

/** Creates the demo organization, fields, users and clients in `store`; call only on an empty database. */
export async function seedDemo(
  store: Store,
  options: { geojson: unknown; baseUrl: string; pbkdf2Iterations: number; random: Random; now: number },
): Promise<DemoSeed> {
  const { random, now } = options;
  const fields = parseFieldCollection(options.geojson);
  // 16 base64url characters (96 bits): typeable on a sign-in form, far beyond guessing.
  const password = encodeBase64Url(random(12));
  const passwordHash = await hashPassword(password, { iterations: options.pbkdf2Iterations, random });
  const person = await createUser(store, { username: DEMO_USERNAME, name: "Demo Farmer", org: DEMO_ORG, passwordHash, now });
  const robot = await createUser(store, {
    username: DEMO_INTEGRATION_USERNAME,
    name: "Demo nightly sync",
    org: DEMO_ORG,
    passwordHash: null,
    now,
  });
  const organization = (await store.organizations.findBySlug(DEMO_ORG))!;
  await store.fields.insertMany(organization.id, fields, { now });
  const redirectUri = demoRedirectUri(options.baseUrl);
  const { web, sync } = await createDemoClients(store, { redirectUri, robotId: robot.id, random, now });
  return {
    organization: DEMO_ORG,
    username: person.username,
    password,
    fields: fields.length,
    authorizationCodeClient: { client_id: web.client.clientId, client_secret: web.clientSecret, redirect_uri: redirectUri, scope: DEMO_SCOPE },
    clientCredentialsClient: {
      client_id: sync.client.clientId,
      client_secret: sync.clientSecret,
      integration_user: robot.username,
      scope: DEMO_SCOPE,
    },
  };
}

/** The default database's file name; its demo credentials keep the short name docs/configuration.md#demo-mode documents. */
const DEFAULT_DB_FILE = "fieldgate.db";

/**
 * Where the demo credentials live: beside the database file. data/fieldgate.db (the default) has
 * data/demo-credentials.json; any other database's whole file name is in its own, e.g. /srv/x.db →
 * /srv/x.db.demo-credentials.json, so two databases in one directory never share (and overwrite) one file. The file
 * also switches demo mode on.
 */
export function demoCredentialsPath(dbPath: string): string | undefined {
  if (dbPath === ":memory:" || dbPath.startsWith("file:")) return undefined;
  const slash = dbPath.lastIndexOf("/");
  const dir = slash === -1 ? "" : dbPath.slice(0, slash + 1);
  const file = dbPath.slice(slash + 1);
  return file === DEFAULT_DB_FILE ? `${dir}demo-credentials.json` : `${dir}${file}.demo-credentials.json`;
}

/** The authorization-code client from a demo credentials file, for the landing page walkthrough. */
export function readDemoCredentials(text: string): DemoCredentials | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const client = (parsed as Partial<DemoSeed> | null)?.authorizationCodeClient;
  if (typeof client?.client_id !== "string" || typeof client.client_secret !== "string") return undefined;
  return { clientId: client.client_id, clientSecret: client.client_secret };
}
