// Demo seed: the organization, fields, users and clients a fresh server starts with.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { sha256Hex, verifyPassword } from "../../src/crypto/hash.ts";
import { parseFieldCollection } from "../../src/geo/geojson.ts";
import { DEMO_FIELDS_URL, demoCredentialsPath, readDemoCredentials, seedDemo } from "../../src/demo/seed.ts";
import { openStore } from "../../src/store/sqlite/store.ts";
import { seededRandom } from "../helpers/fake_clock.ts";

const geojson = JSON.parse(readFileSync(DEMO_FIELDS_URL, "utf8"));

async function seeded() {
  const store = openStore(":memory:");
  const seed = await seedDemo(store, { geojson, baseUrl: "http://localhost:8080", pbkdf2Iterations: 1000, random: seededRandom(7), now: 1_767_225_600 });
  return { store, seed };
}

test("the demo boundaries are 6 to 10 named fields of realistic size with crop and season", () => {
  const features = geojson.features as { properties: Record<string, unknown> }[];
  assert.ok(features.length >= 6 && features.length <= 10);
  const fields = parseFieldCollection(geojson);
  assert.equal(new Set(fields.map((f) => f.name)).size, fields.length);
  for (const field of fields) {
    assert.ok(field.areaHa > 1 && field.areaHa < 60, `${field.name}: ${field.areaHa} ha`);
    assert.ok(field.crop && field.season, field.name);
  }
  assert.ok(fields.some((f) => JSON.parse(f.boundary).type === "MultiPolygon"));
});

test("seedDemo creates demo-farm with its fields, a person who can sign in and an integration user", async () => {
  const { store, seed } = await seeded();
  const org = await store.organizations.findBySlug("demo-farm");
  assert.ok(org);
  assert.equal(await store.fields.count({ organizationIds: [org.id] }), geojson.features.length);
  const person = await store.users.findByUsername(seed.username);
  assert.equal(person?.kind, "person");
  assert.equal(await verifyPassword(seed.password, person!.passwordHash!), true);
  assert.ok(seed.password.length >= 16);
  const robot = await store.users.findByUsername(seed.clientCredentialsClient.integration_user);
  assert.equal(robot?.kind, "integration");
  assert.deepEqual(await store.organizations.idsForUser(person!.id), [org.id]);
  assert.deepEqual(await store.organizations.idsForUser(robot!.id), [org.id]);
});

test("seedDemo registers both demo clients with digests of the secrets it returns", async () => {
  const { store, seed } = await seeded();
  const web = await store.clients.findByClientId(seed.authorizationCodeClient.client_id);
  assert.equal(web?.grantType, "authorization_code");
  assert.equal(web?.redirectUri, "http://localhost:8080/demo/callback");
  assert.equal(web?.scope, "fields:read");
  assert.equal(web?.secretHash, await sha256Hex(seed.authorizationCodeClient.client_secret));
  const sync = await store.clients.findByClientId(seed.clientCredentialsClient.client_id);
  assert.equal(sync?.grantType, "client_credentials");
  assert.equal(sync?.secretHash, await sha256Hex(seed.clientCredentialsClient.client_secret));
  assert.equal((await store.users.findById(sync!.integrationUserId!))?.username, "demo-integration");
});

test("readDemoCredentials returns the authorization-code client and refuses anything else", async () => {
  const { seed } = await seeded();
  assert.deepEqual(readDemoCredentials(JSON.stringify(seed)), {
    clientId: seed.authorizationCodeClient.client_id,
    clientSecret: seed.authorizationCodeClient.client_secret,
  });
  for (const text of ["", "{", "null", "{}", '{"authorizationCodeClient":{"client_id":1}}']) {
    assert.equal(readDemoCredentials(text), undefined, text);
  }
});

test("the credentials file sits beside the database, and in-memory databases have none", () => {
  assert.equal(demoCredentialsPath("data/fieldgate.db"), "data/demo-credentials.json");
  assert.equal(demoCredentialsPath("/var/lib/fg/x.db"), "/var/lib/fg/x.db.demo-credentials.json");
  assert.equal(demoCredentialsPath("/var/lib/fg/fieldgate.db"), "/var/lib/fg/demo-credentials.json");
  // Two databases of one name and different extensions get two files.
  assert.equal(demoCredentialsPath("/srv/x.sqlite"), "/srv/x.sqlite.demo-credentials.json");
  assert.equal(demoCredentialsPath("plain"), "plain.demo-credentials.json");
  assert.equal(demoCredentialsPath("fieldgate.db"), "demo-credentials.json");
  assert.equal(demoCredentialsPath(":memory:"), undefined);
});
