// fields import through runCli: validation before writing, computed areas, progress on a terminal.
import { test } from "../helpers/bounded.ts";
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

test("fields import accepts a file that starts with a byte order mark", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const out = await h.json(["fields", "import", "--org", "acme", h.file("bom.geojson", `\uFEFF${squares(2)}`)]);
  assert.equal(out.imported, 2);
});

test("fields import of broken JSON passes on the parser's message, on one line", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const result = await h.run(["fields", "import", "--org", "acme", h.file("f.geojson", '{"a": 1,\n "b": nope}')]);
  assert.equal(result.code, 2);
  // V8's message (Node and Deno) quotes the text around the error; the newline in it becomes "?".
  assert.match(result.stderr, /f\.geojson is not valid JSON: Unexpected token 'o', "\{"a": 1,\? "b": nope\}" is not valid JSON\n/);
});

test("fields import --replace with a file without features changes nothing unless --allow-empty", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await h.json(["fields", "import", "--org", "acme", h.file("a.geojson", squares(3))]);
  const empty = h.file("empty.geojson", squares(0));
  const before = h.snapshot();
  const refused = await h.run(["fields", "import", "--org", "acme", "--replace", empty]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /empty\.geojson has no features: --replace would leave acme without fields, deleting 3 fields; nothing changed \(--allow-empty does it\)/);
  assert.equal(h.snapshot(), before);
  const out = await h.json(["fields", "import", "--org", "acme", "--replace", "--allow-empty", empty]);
  assert.deepEqual({ imported: out.imported, replaced: out.replaced }, { imported: 0, replaced: 3 });
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 0);
});

test("fields import --allow-empty without --replace is a usage error", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const result = await h.run(["fields", "import", "--org", "acme", "--allow-empty", h.file("f.geojson", squares(1))]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /--allow-empty only applies with --replace/);
});

test("fields import stores a declared area far from the geometry's but says so on stderr", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const features = JSON.parse(squares(4)).features;
  features[1].properties.area_ha = 1000;
  features[2].properties.area_ha = 76; // within 10 % of about 76.3 ha: no note
  features[3].properties.area_ha = 30.9; // acres given as hectares
  const path = h.file("f.geojson", JSON.stringify({ type: "FeatureCollection", features }));
  const result = await h.run(["fields", "import", "--org", "acme", path, "--json"]);
  assert.equal(result.code, 0);
  assert.equal(JSON.parse(result.stdout).warnings, 2);
  assert.match(result.stderr, /^note: area_ha differs from the geometry's area by more than 10 % for 2 features \(stored as declared\):\n/);
  assert.match(result.stderr, /\n {2}feature 1 \("Field 2"\): 1000 ha declared, 76\.\d{4} ha computed\n {2}feature 3 \("Field 4"\): 30\.9 ha declared, 76\.\d{4} ha computed\n$/);
  assert.deepEqual(h.query("SELECT area_ha FROM fields ORDER BY id").map((r) => r.area_ha === 1000 || r.area_ha === 76 || r.area_ha === 30.9), [false, true, true, true]);
});

test("fields import lists the first ten bad features by index and name, and how many more", async () => {
  const h = cliHarness();
  await setupOrg(h);
  const features = JSON.parse(squares(14)).features;
  for (const i of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) features[i].geometry = null;
  features[1].properties.name = 7;
  const result = await h.run(["fields", "import", "--org", "acme", h.file("f.geojson", JSON.stringify({ type: "FeatureCollection", features }))]);
  assert.equal(result.code, 2);
  const lines = result.stderr.split("\n");
  assert.match(lines[0]!, /f\.geojson: 12 features are invalid; nothing imported:$/);
  assert.equal(lines[1], '  feature 1 ("7"): geometry is missing');
  assert.equal(lines[10], '  feature 10 ("Field 11"): geometry is missing');
  assert.equal(lines[11], "  … and 2 more");
  assert.equal(h.query("SELECT COUNT(*) AS n FROM fields")[0]!.n, 0);
});

test("fields import --replace gives the new fields ids above every old one, so old ids never point at new fields", async () => {
  const h = cliHarness();
  await setupOrg(h);
  await h.run(["users", "add", "--username", "bob@example.com", "--integration", "--org", "other"]);
  await h.json(["fields", "import", "--org", "other", h.file("o.geojson", squares(2))]);
  await h.json(["fields", "import", "--org", "acme", h.file("a.geojson", squares(3))]);
  const old = h.query("SELECT id FROM fields").map((r) => Number(r.id));
  // acme holds the highest ids: a plain rowid table would hand them out again.
  await h.json(["fields", "import", "--org", "acme", "--replace", h.file("b.geojson", squares(2, { crop: "maize" }))]);
  const fresh = h.query("SELECT id FROM fields WHERE crop = 'maize'").map((r) => Number(r.id));
  assert.equal(fresh.length, 2);
  assert.ok(fresh.every((id) => id > Math.max(...old)), `${fresh} vs ${old}`);
});
