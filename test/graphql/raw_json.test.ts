// RawJson text is spliced verbatim into results; everything else serialises exactly as JSON.stringify would.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createRawJsonWriter } from "../../src/graphql/raw_json.ts";
import { seededRandom } from "../helpers/fake_clock.ts";
import { buildWorld, graphqlRequest } from "../helpers/graphql.ts";

const writer = () => createRawJsonWriter(seededRandom(1));

test("stored JSON text appears verbatim where the RawJson was, the rest as JSON.stringify writes it", () => {
  const raw = writer();
  const boundary = '{"type":"Polygon","coordinates":[[[5.1,52.3],[5.2,52.3],[5.2,52.4],[5.1,52.3]]]}';
  const result = { data: { fields: { nodes: [{ name: "North \"7\"", boundary: raw.wrap(boundary) }, { name: "é", boundary: raw.wrap("[]") }] } } };
  const text = raw.stringify(result);
  assert.equal(text, `{"data":{"fields":{"nodes":[{"name":"North \\"7\\"","boundary":${boundary}},{"name":"é","boundary":[]}]}}}`);
  assert.deepEqual(JSON.parse(text).data.fields.nodes[0].boundary, JSON.parse(boundary));
});

test("a result without RawJson is exactly JSON.stringify's", () => {
  const result = { data: { fields: { total_count: 8 } }, errors: [{ message: "x", path: ["a", 0] }] };
  assert.equal(writer().stringify(result), JSON.stringify(result));
});

test("a data string shaped like a placeholder stays a string", () => {
  const raw = writer();
  const result = { a: "fgraw00000000000000000000000000000000:0", b: raw.wrap('{"x":1}'), c: '"fgraw:0"' };
  assert.deepEqual(JSON.parse(raw.stringify(result)), { a: result.a, b: { x: 1 }, c: result.c });
});

test("outside its writer's stringify a RawJson serialises as its parsed value", () => {
  assert.equal(JSON.stringify({ b: writer().wrap('{ "x" : [1, 2] }') }), '{"b":{"x":[1,2]}}');
});

test("another writer's RawJson serialises as its parsed value, so requests never share texts", () => {
  const [mine, theirs] = [writer(), writer()];
  assert.equal(mine.stringify({ a: mine.wrap("[1]"), b: theirs.wrap('{ "x" : 2 }') }), '{"a":[1],"b":{"x":2}}');
});

test("for any JSON tree with any values stored as text, the output parses to the same tree", () => {
  const tree = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 2 }), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.string(), tie("node"), { maxKeys: 4 })),
  })).node;
  fc.assert(fc.property(tree, fc.infiniteStream(fc.boolean()), (value, flips) => {
    const raw = writer();
    // Wrap some subtrees as stored text, as the boundary resolver does.
    const wrap = (v: unknown): unknown => {
      if (flips.next().value) return raw.wrap(JSON.stringify(v) ?? "null");
      if (Array.isArray(v)) return v.map(wrap);
      if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wrap(x)]));
      return v;
    };
    const expected = JSON.parse(JSON.stringify(value) ?? "null");
    assert.deepEqual(JSON.parse(raw.stringify(wrap(value)) ?? "null"), expected);
  }));
});

test("boundaries come out of /graphql as the stored GeoJSON objects, beside every other field", async () => {
  const { t, acmeToken } = await buildWorld();
  const query = "{ fields(first: 3) { total_count nodes { id name boundary centroid { longitude } } } }";
  const res = await t.app.fetch(graphqlRequest(acmeToken, { query }));
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.errors, undefined);
  const acme = (await t.store.organizations.findBySlug("acme"))!.id;
  const stored = await t.store.fields.page({ organizationIds: [acme] }, { afterId: 0, limit: 3 }, { take: () => true });
  assert.equal(body.data.fields.nodes.length, 3);
  body.data.fields.nodes.forEach((node: { name: string; boundary: unknown }, i: number) => {
    assert.equal(node.name, stored[i]!.name);
    assert.deepEqual(node.boundary, JSON.parse(stored[i]!.boundary!));
    assert.equal((node.boundary as { type: string }).type, "Polygon");
  });
});
