import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { demoRedirectUri, syncDemoRedirectUri } from "../../src/demo/redirect_uri.ts";
import { openTestApp } from "../helpers/test_app.ts";

test("demoRedirectUri is the demo callback under the base URL", () => {
  assert.equal(demoRedirectUri("http://localhost:41234"), "http://localhost:41234/demo/callback");
});

test("syncDemoRedirectUri moves only the demo client to the current base URL, and logs the change once", async () => {
  const t = await openTestApp();
  const demo = await t.seed.client({ redirectUri: "http://localhost:8080/demo/callback" });
  const other = await t.seed.client({ redirectUri: "http://localhost:8080/demo/callback" });
  const options = { demo: { clientId: demo.clientId, clientSecret: demo.clientSecret }, baseUrl: "http://localhost:9090", log: (event: string, fields = {}) => t.log.push({ event, fields }) };
  assert.equal(await syncDemoRedirectUri(t.store, options), true);
  assert.equal((await t.store.clients.findByClientId(demo.clientId))?.redirectUri, "http://localhost:9090/demo/callback");
  assert.equal((await t.store.clients.findByClientId(other.clientId))?.redirectUri, "http://localhost:8080/demo/callback");
  assert.deepEqual(t.log.map((l) => l.event), ["demo_redirect_uri_updated"]);
  assert.equal(t.log[0]!.fields.previous, "http://localhost:8080/demo/callback");
  assert.equal(await syncDemoRedirectUri(t.store, options), true);
  assert.equal(t.log.length, 1, "an unchanged URI is not logged again");
});

test("syncDemoRedirectUri reports a demo client missing from the database and changes nothing", async () => {
  const t = await openTestApp();
  const other = await t.seed.client();
  const log: string[] = [];
  const synced = await syncDemoRedirectUri(t.store, {
    demo: { clientId: "not-in-this-database", clientSecret: "x" },
    baseUrl: "http://localhost:9090",
    log: (event) => log.push(event),
  });
  assert.equal(synced, false);
  assert.deepEqual(log, ["demo_client_missing"]);
  assert.equal((await t.store.clients.findByClientId(other.clientId))?.redirectUri, "https://client.example/cb");
});
