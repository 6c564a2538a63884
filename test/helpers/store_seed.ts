// Seeds rows through the Store interface alone, so a contract test (storeTest) builds the same state on every backend.
import { sha256Hex } from "../../src/crypto/hash.ts";
import type { Client, NewToken, Store, User } from "../../src/store/contract.ts";

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}-${Math.random().toString(36).slice(2, 8)}`;

/** A person who can sign in with the password hash "hash-of-<username>", member of organization `org` (default "acme"). */
export async function seedPerson(store: Store, now: number, options: { username?: string; org?: string } = {}): Promise<User> {
  const username = options.username ?? unique("person");
  return store.users.insertMember({ username, kind: "person", passwordHash: `hash-of-${username}`, now }, options.org ?? "acme");
}

/** An authorization-code client redirecting to https://client.example/cb, scope fields:read. */
export function seedClient(store: Store, now: number, options: { name?: string } = {}): Promise<Client> {
  return store.clients.insert({
    clientId: unique("client"),
    secretHash: "0".repeat(64),
    name: options.name ?? "Field notes app",
    grantType: "authorization_code",
    redirectUris: ["https://client.example/cb"],
    scope: "fields:read",
    integrationUserId: null,
    now,
  });
}

/** A client_credentials client acting as a new integration user. */
export async function seedMachineClient(store: Store, now: number): Promise<{ client: Client; robot: User }> {
  const robot = await store.users.insert({ username: unique("robot"), kind: "integration", now });
  const client = await store.clients.insert({
    clientId: unique("machine"),
    secretHash: "0".repeat(64),
    name: "Nightly sync",
    grantType: "client_credentials",
    redirectUris: [],
    scope: "fields:read",
    integrationUserId: robot.id,
    now,
  });
  return { client, robot };
}

/** A code stored as the authorize page would (the digest of its plaintext), opening a new grant family. */
export async function seedCode(store: Store, client: Client, user: User, now: number, ttl = 600) {
  const code = unique("code");
  const codeHash = await sha256Hex(code);
  const familyId = unique("family");
  await store.codes.issue({
    codeHash,
    familyId,
    clientId: client.id,
    userId: user.id,
    redirectUri: "https://client.example/cb",
    scope: client.scope,
    codeChallenge: null,
    issuedAt: now,
    expiresAt: now + ttl,
  });
  return { codeHash, familyId };
}

/**
 * A grant as the code exchange leaves it: a used code and an access and a refresh token in its family. Returns the
 * tokens' digests.
 */
export async function seedGrant(
  store: Store,
  client: Client,
  user: User,
  now: number,
  { accessTtl = 100, refreshTtl = 1_000 } = {},
) {
  const { codeHash, familyId } = await seedCode(store, client, user, now);
  const token = async (kind: NewToken["kind"], ttl: number): Promise<NewToken> => ({
    tokenHash: await sha256Hex(unique(kind)),
    kind,
    grantType: "authorization_code",
    scope: client.scope,
    issuedAt: now,
    expiresAt: now + ttl,
  });
  const tokens = [await token("access", accessTtl), await token("refresh", refreshTtl)];
  const result = await store.tokens.exchangeCode(codeHash, client, now, () => ({ issue: { tokens } }));
  if (result.status !== "issued") throw new Error(`seedGrant: the exchange reported ${result.status}`);
  return { codeHash, familyId, access: tokens[0]!.tokenHash, refresh: tokens[1]!.tokenHash };
}
