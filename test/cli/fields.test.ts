// fields import through runCli: validation before writing, computed areas, progress on a terminal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { cliHarness, setupOrg, squares } from "./harness.ts";

test("fields import stores every feature with its computed area and centroid", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const out = await h.json(["fields", "import", "--org", "acme", h.file("f.geojson", squares(3, { crop: "wheat", season: "2026" }))]);
  assert.equal(out.imported, 3);
  const rows = h.query("SELECT name, area_ha, crop, season, centroid_lon, centroid_lat FROM fields ORDER BY id");
  assert.deepEqual(rows.map((r) => r.name), ["Field 1", "Field 2", "Field 3"]);
  // A 0.01° square at 52°N is about 1113 m x 685 m: roughly 76 ha.
  for (const row of rows) {
    assert.ok(Math.abs(Number(row.area_ha) - 76.3) < 0.5, String(row.area_ha));
    assert.equal(row.crop, "wheat");
    assert.equal(row.season, "2026");
    assert.ok(Math.abs(Number(row.centroid_lat) - 52.005) < 1e-4);
  }
});

test("fields import keeps a given area_ha instead of computing one", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await h.json(["fields", "import", "--org", "acme", h.file("f.geojson", squares(1, { area_ha: 12.5 }))]);
  assert.equal(h.query("SELECT area_ha FROM fields")[0]!.area_ha, 12.5);
});

test("fields import prints a summary without --json", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const result = await h.run(["fields", "import", "--org", "acme", h.file("f.geojson", squares(2))]);
  assert.match(result.stdout, /Imported 2 fields \(\d+\.\d{2} ha\) into acme/);
});

test("fields import imports the checked-in demo boundaries", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const text = readFileSync(new URL("../../data/demo-fields.geojson", import.meta.url), "utf8");
  const out = await h.json(["fields", "import", "--org", "acme", h.file("demo.geojson", text)]);
  assert.equal(out.imported, JSON.parse(text).features.length);
});

test("fields import of a long file shows progress on a terminal only", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const path = h.file("big.geojson", squares(1500));
  const tty = await h.run(["fields", "import", "--org", "acme", path], { tty: true });
  assert.match(tty.stderr, /validated 1000\/1500 features/);
  const piped = await h.run(["fields", "import", "--org", "acme", path, "--json"]);
  assert.doesNotMatch(piped.stderr, /validated/);
  assert.equal(JSON.parse(piped.stdout).imported, 1500);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 3000);
});

test("fields import into an organization that has fields says they were added beside them", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const path = h.file("f.geojson", squares(2));
  const first = await h.run(["fields", "import", "--org", "acme", path]);
  assert.equal(first.stderr, "");
  const again = await h.run(["fields", "import", "--org", "acme", path]);
  assert.equal(again.code, 0);
  assert.match(again.stderr, /acme already had 2 fields; the new ones were added beside them \(--replace replaces them\)/);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 4);
});

test("fields import --replace swaps the organization's fields in one transaction and leaves others alone", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await h.run(["users", "add", "--username", "bob@example.com", "--integration", "--org", "other"]);
  await h.json(["fields", "import", "--org", "acme", h.file("a.geojson", squares(3))]);
  await h.json(["fields", "import", "--org", "other", h.file("o.geojson", squares(2))]);
  const out = await h.json(["fields", "import", "--org", "acme", "--replace", h.file("b.geojson", squares(1, { crop: "maize" }))]);
  assert.deepEqual({ imported: out.imported, replaced: out.replaced }, { imported: 1, replaced: 3 });
  const rows = h.query(`SELECT o.slug, f.crop FROM fields f JOIN organizations o ON o.id = f.organization_id ORDER BY f.id`);
  assert.deepEqual(rows.map((r) => `${r.slug}:${r.crop}`), ["other:null", "other:null", "acme:maize"]);
  // The trigger-kept counts follow the delete as well as the insert.
  assert.deepEqual(h.query("SELECT SUM(n) AS n FROM field_counts fc JOIN organizations o ON o.id = fc.organization_id WHERE o.slug = 'acme'")[0]!.n, 1);
  const text = await h.run(["fields", "import", "--org", "acme", "--replace", h.file("c.geojson", squares(1))]);
  assert.match(text.stdout, /^Imported 1 field \(\d+\.\d{2} ha\) into acme \(replacing 1 field\)\.\n$/);
  assert.equal(text.stderr, "");
});

test("fields import --replace with an invalid file changes nothing", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await h.json(["fields", "import", "--org", "acme", h.file("a.geojson", squares(2))]);
  const bad = JSON.stringify({ type: "FeatureCollection", features: [{ type: "Feature", properties: {}, geometry: null }] });
  const result = await h.run(["fields", "import", "--org", "acme", "--replace", h.file("bad.geojson", bad)]);
  assert.equal(result.code, 2);
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 2);
});
