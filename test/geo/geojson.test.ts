// FeatureCollection validation: valid features parse, invalid ones are named by index (and name), several per run.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { GeoJsonError } from "../../src/geo/errors.ts";
import { parseFieldCollection } from "../../src/geo/geojson.ts";

const square = [[5, 52], [5.01, 52], [5.01, 52.01], [5, 52.01], [5, 52]];
const good = { type: "Feature", properties: { name: "North" }, geometry: { type: "Polygon", coordinates: [square] } };

function collection(bad: unknown): unknown {
  return { type: "FeatureCollection", features: [good, good, bad] };
}

const withProperties = (properties: unknown) => ({ ...good, properties });

test("a valid collection parses into fields with area, centroid and a clean boundary", () => {
  const fields = parseFieldCollection({
    type: "FeatureCollection",
    features: [{ ...good, id: "fmis-123", properties: { name: " North ", crop: "maize", season: 2026, extra: "dropped" }, geometry: { ...good.geometry, bbox: [0, 0, 1, 1] } }],
  });
  assert.equal(fields.length, 1);
  const [field] = fields;
  assert.equal(field!.name, "North");
  assert.equal(field!.crop, "maize");
  assert.equal(field!.season, "2026");
  assert.ok(field!.areaHa > 76 && field!.areaHa < 77);
  assert.equal(field!.computedAreaHa, field!.areaHa);
  assert.deepEqual(JSON.parse(field!.boundary), { type: "Polygon", coordinates: [square] });
});

test("an empty collection parses into no fields", () => {
  assert.deepEqual(parseFieldCollection({ type: "FeatureCollection", features: [] }), []);
});

test("a numeric name is taken as text, like crop and season", () => {
  const [field] = parseFieldCollection({ type: "FeatureCollection", features: [withProperties({ name: 12 })] });
  assert.equal(field!.name, "12");
});

test("rings are stored in RFC 7946 order, with repeated positions kept", () => {
  const clockwise = [[5, 52], [5, 52.01], [5, 52.01], [5.01, 52.01], [5.01, 52], [5, 52]];
  const holeCounterclockwise = [[5.002, 52.002], [5.004, 52.002], [5.004, 52.004], [5.002, 52.004], [5.002, 52.002]];
  const [field] = parseFieldCollection({
    type: "FeatureCollection",
    features: [{ ...good, geometry: { type: "Polygon", coordinates: [clockwise, holeCounterclockwise] } }],
  });
  assert.deepEqual(JSON.parse(field!.boundary).coordinates, [[...clockwise].reverse(), [...holeCounterclockwise].reverse()]);
});

test("a declared area_ha is stored, with the computed area beside it", () => {
  const [field] = parseFieldCollection({ type: "FeatureCollection", features: [withProperties({ name: "N", area_ha: 1000 })] });
  assert.equal(field!.areaHa, 1000);
  assert.ok(field!.computedAreaHa > 76 && field!.computedAreaHa < 77);
});

test("area_ha at the maximum of 1 000 000 ha is accepted", () => {
  const [field] = parseFieldCollection({ type: "FeatureCollection", features: [withProperties({ name: "N", area_ha: 1_000_000 })] });
  assert.equal(field!.areaHa, 1_000_000);
});

test("a MultiPolygon split at the antimeridian parses, its centroid on the antimeridian", () => {
  const east = [[179.999, -16.8], [180, -16.8], [180, -16.798], [179.999, -16.798], [179.999, -16.8]];
  const west = [[-180, -16.8], [-179.999, -16.8], [-179.999, -16.798], [-180, -16.798], [-180, -16.8]];
  const [field] = parseFieldCollection({
    type: "FeatureCollection",
    features: [{ ...good, geometry: { type: "MultiPolygon", coordinates: [[east], [west]] } }],
  });
  // geographiclib-geodesic (WGS84, edges densified): 4.718786540 ha.
  assert.equal(field!.areaHa, 4.7188);
  assert.ok(Math.abs(field!.centroid.lon) > 179.9999, JSON.stringify(field!.centroid));
});

const geometry = (g: unknown) => ({ type: "Feature", properties: { name: "X" }, geometry: g });

/** A closed counterclockwise ring of `n` distinct positions (n + 1 with the closing one) around (lon, 52). */
function circle(n: number, lon: number): number[][] {
  const ring = Array.from({ length: n }, (_, i) => [lon + 0.01 * Math.cos((2 * Math.PI * i) / n), 52 + 0.01 * Math.sin((2 * Math.PI * i) / n)]);
  return [...ring, ring[0]!];
}

test("a field may have 10,000 positions and a 200-character crop and season", () => {
  const feature = { ...polygon(circle(9_999, 5)), properties: { name: "X", crop: "c".repeat(200), season: "s".repeat(200) } };
  const [field] = parseFieldCollection({ type: "FeatureCollection", features: [feature] });
  assert.equal(JSON.parse(field!.boundary).coordinates[0].length, 10_000);
  assert.equal(field!.crop, "c".repeat(200));
});
const polygon = (...rings: number[][][]) => geometry({ type: "Polygon", coordinates: rings });

const BAD_FEATURES: [string, unknown, RegExp][] = [
  ["a null feature", null, /not a GeoJSON Feature/],
  ["a bare geometry", good.geometry, /not a GeoJSON Feature/],
  ["a feature without a name", withProperties({}), /property "name" is required/],
  ["a feature without properties", withProperties(null), /property "name" is required/],
  ["a feature with a boolean name", withProperties({ name: true }), /property "name" must be a string, got boolean/],
  ["a feature with an object name", withProperties({ name: { de: "Nord" } }), /property "name" must be a string, got object/],
  ["a very long name", withProperties({ name: "x".repeat(201) }), /longer than 200/],
  ["a very long crop", withProperties({ name: "X", crop: "x".repeat(201) }), /property "crop" is longer than 200/],
  ["a very long season", withProperties({ name: "X", season: "x".repeat(201) }), /property "season" is longer than 200/],
  ["a polygon of 10,001 positions", polygon(circle(10_000, 5)), /10001 positions, more than the 10000 a field may have/],
  ["a multipolygon of 10,002 positions", geometry({ type: "MultiPolygon", coordinates: [[circle(5_000, 5)], [circle(5_000, 6)]] }), /10002 positions/],
  ["a name with a newline inside", withProperties({ name: "North\nfield" }), /property "name" contains a control character \(U\+000A\)/],
  ["a name with a NUL", withProperties({ name: "a\u0000b" }), /"name" contains a control character \(U\+0000\)/],
  ["a name with a C1 control", withProperties({ name: "a\u009bb" }), /"name" contains a control character \(U\+009B\)/],
  ["a crop with an escape", withProperties({ name: "X", crop: "wheat\u001b[31m" }), /"crop" contains a control character \(U\+001B\)/],
  ["a season with a tab inside", withProperties({ name: "X", season: "2025\t2026" }), /"season" contains a control character \(U\+0009\)/],
  ["a crop that is an object", withProperties({ name: "X", crop: {} }), /property "crop" must be a string, got object/],
  ["a negative area_ha", withProperties({ name: "X", area_ha: -1 }), /area_ha" must be from 0\.0001 to 1000000 hectares, got -1/],
  ["an area_ha given as text", withProperties({ name: "X", area_ha: "12" }), /area_ha" must be a number of hectares, got string/],
  ["an area_ha that overflows when rounded", withProperties({ name: "X", area_ha: 1e305 }), /area_ha" must be from 0\.0001 .*, got 1e\+305/],
  ["an area_ha that rounds to zero", withProperties({ name: "X", area_ha: 0.00004 }), /area_ha" must be from 0\.0001 .*, got 0\.00004/],
  ["an area_ha above the maximum", withProperties({ name: "X", area_ha: 1_000_001 }), /area_ha" must be from 0\.0001 to 1000000 hectares/],
  ["no geometry", geometry(null), /geometry is missing/],
  ["a Point", geometry({ type: "Point", coordinates: [5, 52] }), /Polygon or MultiPolygon, got "Point"/],
  ["a LineString", geometry({ type: "LineString", coordinates: square }), /Polygon or MultiPolygon/],
  ["a polygon without rings", geometry({ type: "Polygon", coordinates: [] }), /no rings/],
  ["a ring of three positions", polygon(square.slice(0, 3)), /at least 4/],
  ["an open ring", polygon([...square.slice(0, 4), [5, 52.02]]), /not closed/],
  ["a position with text", polygon([["5", 52], ...square.slice(1)] as number[][]), /non-numeric/],
  ["a position with one number", polygon([[5], ...square.slice(1)]), /position 0 has 1 number; a position is \[lon, lat\] or \[lon, lat, altitude\]/],
  ["a position with four numbers", polygon([[5, 52, 0, 1], ...square.slice(1)]), /position 0 has 4 numbers/],
  ["a latitude beyond 90", polygon([[5, 95], [5.01, 95], [5.01, 95.01], [5, 95]]), /position 0 \[5, 95\] is outside longitude\/latitude range; the file looks projected: GeoJSON must be WGS 84 lon\/lat \(RFC 7946 §4\)/],
  ["projected coordinates", polygon([[390000, 5818000], [390100, 5818000], [390100, 5818100], [390000, 5818000]]), /position 0 \[390000, 5818000\] is outside .* looks projected/],
  ["a degenerate ring", polygon([[5, 52], [5.01, 52], [5, 52], [5.01, 52], [5, 52]]), /degenerate/],
  ["a flat ring", polygon([[5, 52], [5.01, 52], [5.02, 52], [5, 52]]), /turns back on itself/],
  ["a sliver below 1 m²", polygon([[13.4, 52.5], [13.401, 52.5000000001], [13.402, 52.5], [13.4, 52.5]]), /geometry has zero area \(below 1 m²\)/],
  ["a geometry too large for a field", polygon([[0, 0], [20, 0], [20, 20], [0, 20], [0, 0]]), /more than 1000000 ha; are the coordinates WGS 84 lon\/lat\?/],
  ["a bow-tie", polygon([[13.4, 52.5], [13.403, 52.502], [13.403, 52.5], [13.4, 52.501], [13.4, 52.5]]), /polygon ring 0 crosses or touches itself near 13\.401,52\.5006667/],
  ["a hole outside its shell", polygon(square, [[6, 52], [6, 52.001], [6.001, 52.001], [6, 52]]), /polygon ring 1 \(a hole\) is not inside ring 0 near 6,52/],
  ["a ring across the antimeridian", polygon([[179.999, -16.8], [-179.999, -16.8], [-179.999, -16.798], [179.999, -16.8]]), /split it at the antimeridian \(RFC 7946 §3\.1\.9\)/],
  ["an empty MultiPolygon", geometry({ type: "MultiPolygon", coordinates: [] }), /no polygons/],
  ["a MultiPolygon with a bad member", geometry({ type: "MultiPolygon", coordinates: [[square], [square.slice(0, 2)]] }), /polygon 1 ring 0/],
  ["two overlapping MultiPolygon parts", geometry({ type: "MultiPolygon", coordinates: [[square], [square.map(([x, y]) => [x! + 0.005, y!])]] }), /polygon 0 .*polygon 1|polygon 1 .*polygon 0/],
  ["the same part twice", geometry({ type: "MultiPolygon", coordinates: [[square], [square]] }), /polygon 0 .*polygon 1|polygon 1 .*polygon 0/],
];

for (const [name, feature, message] of BAD_FEATURES) {
  test(`parseFieldCollection rejects ${name} and names feature 2`, () => {
    assert.throws(() => parseFieldCollection(collection(feature)), (error: unknown) => {
      assert.ok(error instanceof GeoJsonError);
      assert.equal(error.index, 2);
      assert.equal(error.total, 1);
      assert.match(error.message, /^feature 2( \(".*"\))?: /);
      assert.match(error.message, message);
      return true;
    });
  });
}

test("a bad feature with a readable name is named by index and name", () => {
  const features = [good, { ...geometry(null), properties: { name: "Nord-3" } }, { ...geometry(null), properties: { name: 7 } }];
  assert.throws(() => parseFieldCollection({ type: "FeatureCollection", features }), (error: unknown) => {
    assert.ok(error instanceof GeoJsonError);
    assert.equal(error.message, 'feature 1 ("Nord-3"): geometry is missing\nfeature 2 ("7"): geometry is missing');
    return true;
  });
});

test("a name shown in a message has its control characters escaped", () => {
  assert.throws(() => parseFieldCollection(collection(withProperties({ name: "a\u009b2Jb" }))), (error: unknown) => {
    assert.ok(error instanceof GeoJsonError);
    assert.ok(error.message.startsWith('feature 2 ("a\\u009b2Jb"): '), error.message);
    return true;
  });
});

test("up to ten bad features are reported in one run, then how many more", () => {
  const features = Array.from({ length: 15 }, (_, i) => (i % 5 === 0 ? good : { ...geometry(null), properties: { name: `F${i}` } }));
  assert.throws(() => parseFieldCollection({ type: "FeatureCollection", features }), (error: unknown) => {
    assert.ok(error instanceof GeoJsonError);
    assert.equal(error.total, 12);
    assert.equal(error.index, 1);
    assert.deepEqual(error.problems.map((p) => p.index), [1, 2, 3, 4, 6, 7, 8, 9, 11, 12]);
    const lines = error.message.split("\n");
    assert.equal(lines.length, 11);
    assert.equal(lines[0], 'feature 1 ("F1"): geometry is missing');
    assert.equal(lines[10], "… and 2 more");
    return true;
  });
});

for (const [name, value] of [["null", null], ["a Feature", good], ["a collection without features", { type: "FeatureCollection" }]] as const) {
  test(`parseFieldCollection rejects ${name} as a whole`, () => {
    assert.throws(() => parseFieldCollection(value), (error: unknown) => error instanceof GeoJsonError && error.index === undefined);
  });
}

const CRS_NAMES: [string, unknown, boolean][] = [
  ["OGC CRS84 (URN)", { type: "name", properties: { name: "urn:ogc:def:crs:OGC:1.3:CRS84" } }, true],
  ["EPSG:4326", { type: "name", properties: { name: "EPSG:4326" } }, true],
  ["EPSG 4326 as a URN", { type: "name", properties: { name: "urn:ogc:def:crs:EPSG::4326" } }, true],
  ["CRS84 as an OGC URL", { type: "name", properties: { name: "http://www.opengis.net/def/crs/OGC/1.3/CRS84" } }, true],
  ["a null crs", null, true],
  ["UTM zone 33N (EPSG:25833)", { type: "name", properties: { name: "urn:ogc:def:crs:EPSG::25833" } }, false],
  ["Web Mercator", { type: "name", properties: { name: "EPSG:3857" } }, false],
  ["EPSG:24326, which only ends in 4326", { type: "name", properties: { name: "EPSG:24326" } }, false],
  ["a linked crs", { type: "link", properties: { href: "http://example.com/crs/42" } }, false],
];

for (const [name, crs, accepted] of CRS_NAMES) {
  test(`a FeatureCollection whose crs is ${name} is ${accepted ? "accepted" : "refused as a whole"}`, () => {
    const parse = () => parseFieldCollection({ type: "FeatureCollection", crs, features: [good] });
    if (accepted) {
      assert.equal(parse().length, 1);
      return;
    }
    assert.throws(parse, (error: unknown) => {
      assert.ok(error instanceof GeoJsonError);
      assert.equal(error.index, undefined);
      assert.match(error.message, /^FeatureCollection "crs" is .*; GeoJSON must be WGS 84 lon\/lat \(RFC 7946 §4\): reproject the file/);
      return true;
    });
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
