// FeatureCollection validation: valid features parse, every invalid shape is named by its feature index.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GeoJsonError, parseFieldCollection } from "../../src/geo/geojson.ts";

const square = [[5, 52], [5.01, 52], [5.01, 52.01], [5, 52.01], [5, 52]];
const good = { type: "Feature", properties: { name: "North" }, geometry: { type: "Polygon", coordinates: [square] } };

function collection(bad: unknown): unknown {
  return { type: "FeatureCollection", features: [good, good, bad] };
}

test("a valid collection parses into fields with area, centroid and a clean boundary", () => {
  const fields = parseFieldCollection({
    type: "FeatureCollection",
    features: [{ ...good, properties: { name: " North ", crop: "maize", season: 2026, extra: "dropped" }, geometry: { ...good.geometry, bbox: [0, 0, 1, 1] } }],
  });
  assert.equal(fields.length, 1);
  const [field] = fields;
  assert.equal(field!.name, "North");
  assert.equal(field!.crop, "maize");
  assert.equal(field!.season, "2026");
  assert.ok(field!.areaHa > 76 && field!.areaHa < 77);
  assert.deepEqual(JSON.parse(field!.boundary), { type: "Polygon", coordinates: [square] });
});

test("an empty collection parses into no fields", () => {
  assert.deepEqual(parseFieldCollection({ type: "FeatureCollection", features: [] }), []);
});

const geometry = (g: unknown) => ({ type: "Feature", properties: { name: "X" }, geometry: g });

const BAD_FEATURES: [string, unknown, RegExp][] = [
  ["a null feature", null, /not a GeoJSON Feature/],
  ["a bare geometry", good.geometry, /not a GeoJSON Feature/],
  ["a feature without a name", { ...good, properties: {} }, /name/],
  ["a feature without properties", { ...good, properties: null }, /name/],
  ["a feature with a numeric name", { ...good, properties: { name: 7 } }, /name/],
  ["a very long name", { ...good, properties: { name: "x".repeat(201) } }, /longer than 200/],
  ["a crop that is an object", { ...good, properties: { name: "X", crop: {} } }, /crop/],
  ["a negative area_ha", { ...good, properties: { name: "X", area_ha: -1 } }, /area_ha/],
  ["an area_ha given as text", { ...good, properties: { name: "X", area_ha: "12" } }, /area_ha/],
  ["no geometry", geometry(null), /geometry is missing/],
  ["a Point", geometry({ type: "Point", coordinates: [5, 52] }), /Polygon or MultiPolygon/],
  ["a LineString", geometry({ type: "LineString", coordinates: square }), /Polygon or MultiPolygon/],
  ["a polygon without rings", geometry({ type: "Polygon", coordinates: [] }), /no rings/],
  ["a ring of three positions", geometry({ type: "Polygon", coordinates: [square.slice(0, 3)] }), /at least 4/],
  ["an open ring", geometry({ type: "Polygon", coordinates: [[...square.slice(0, 4), [5, 52.02]]] }), /not closed/],
  ["a position with text", geometry({ type: "Polygon", coordinates: [[["5", 52], ...square.slice(1)]] }), /non-numeric/],
  ["a position with one number", geometry({ type: "Polygon", coordinates: [[[5], ...square.slice(1)]] }), /position/],
  ["a latitude beyond 90", geometry({ type: "Polygon", coordinates: [[[5, 95], [5.01, 95], [5.01, 95.01], [5, 95]]] }), /outside/],
  ["a degenerate ring", geometry({ type: "Polygon", coordinates: [[[5, 52], [5.01, 52], [5, 52], [5.01, 52], [5, 52]]] }), /degenerate/],
  ["a zero-area ring", geometry({ type: "Polygon", coordinates: [[[5, 52], [5.01, 52], [5.02, 52], [5, 52]]] }), /zero area/],
  ["an empty MultiPolygon", geometry({ type: "MultiPolygon", coordinates: [] }), /no polygons/],
  ["a MultiPolygon with a bad member", geometry({ type: "MultiPolygon", coordinates: [[square], [square.slice(0, 2)]] }), /polygon 1 ring 0/],
];

for (const [name, feature, message] of BAD_FEATURES) {
  test(`parseFieldCollection rejects ${name} and names feature 2`, () => {
    assert.throws(() => parseFieldCollection(collection(feature)), (error: unknown) => {
      assert.ok(error instanceof GeoJsonError);
      assert.equal(error.index, 2);
      assert.match(error.message, /^feature 2: /);
      assert.match(error.message, message);
      return true;
    });
  });
}

for (const [name, value] of [["null", null], ["a Feature", good], ["a collection without features", { type: "FeatureCollection" }]] as const) {
  test(`parseFieldCollection rejects ${name} as a whole`, () => {
    assert.throws(() => parseFieldCollection(value), (error: unknown) => error instanceof GeoJsonError && error.index === undefined);
  });
}

test("parseFieldCollection reports progress every thousand features", () => {
  const calls: number[] = [];
  parseFieldCollection({ type: "FeatureCollection", features: Array(2500).fill(good) }, (done) => calls.push(done));
  assert.deepEqual(calls, [1000, 2000]);
});

test("parseFieldCollection passes an error that is not a validation failure through unchanged", () => {
  // A bug (here in the caller's progress callback) must keep its type and stack, not become "feature 999: …".
  const bug = new TypeError("cannot read properties of undefined");
  assert.throws(
    () => parseFieldCollection({ type: "FeatureCollection", features: Array(1000).fill(good) }, () => { throw bug; }),
    (error: unknown) => error === bug,
  );
});
